//! Which values `launch --redact` masks: every value its operator layer
//! (the `.env` files) filled, as the `agentenv.toml` beside each `.env`
//! declares it; only values that are masked ([`crate::core::masking`],
//! README "Masked or not"). (A session's are
//! [`crate::session::Session::values_to_mask`]; `harness run --redact`
//! masks every value of the resolved runner and sandbox maps.)

use crate::core::{Action, Assembly, LayerKind};

/// Variables that are sensitive but not masked, and why (names only).
pub(crate) type NotMasked = Vec<(String, &'static str)>;

/// `launch`: every value the operator layer (its `.env` files) filled that
/// is masked ([`crate::core::masking`]). The declarations are the
/// `agentenv.toml` beside the `.env` file that filled the value (the same
/// file and fields as a store's): `public = true` leaves the value
/// unmasked, `sensitive = true` masks it from 4 bytes. Returns the values
/// to mask and, for `-v`, each filled variable that is not masked and why
/// (names only). Warnings about the file go to `notes`.
pub(crate) fn operator_sensitive(
    asm: &Assembly,
    cwd: &std::path::Path,
    notes: &mut Vec<crate::core::Note>,
) -> (Vec<(String, Vec<u8>)>, NotMasked) {
    use crate::session::sensitive::Declarations;
    let mut decls: std::collections::BTreeMap<std::path::PathBuf, Option<Declarations>> =
        Default::default();
    let (mut masked, mut not) = (Vec::new(), Vec::new());
    for (k, v) in asm.current() {
        let Some(t) = asm
            .touches(k)
            .iter()
            .rev()
            .find(|t| matches!(t.action, Action::Set | Action::Override | Action::Unset))
            .filter(|t| t.action != Action::Unset)
        else {
            continue;
        };
        let info = &asm.layers()[t.layer].info;
        if info.kind != LayerKind::DotenvFile {
            continue;
        }
        let dir = info
            .path
            .as_deref()
            .and_then(std::path::Path::parent)
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let d = decls
            .entry(dir.clone())
            .or_insert_with(|| Declarations::load(&dir, cwd, notes));
        let name = k.to_string_lossy().into_owned();
        let (public, sensitive) = d
            .as_ref()
            .and_then(|d| d.declared(k.as_encoded_bytes()))
            .unwrap_or((false, false));
        if public {
            not.push((name, "declared public"));
            continue;
        }
        let value = v.as_encoded_bytes();
        match crate::core::masking(value, sensitive).reason() {
            None => masked.push((name, value.to_vec())),
            Some(why) => not.push((name, why)),
        }
    }
    (masked, not)
}
