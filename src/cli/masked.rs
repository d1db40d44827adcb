//! Which values the masker gets: the CLI's choice per command, made
//! from a session or an operator assembly (so `mask` itself knows
//! neither).
//!
//! - A session (`exec --redact`, `redact`): its sensitive values
//!   ([`crate::session::Session::sensitive_values`]), and also every value
//!   a store layer set to what the base environment already held. The
//!   session calls such a value the base's (it is not listed there), but
//!   that is exactly the case of a shell that loaded the stores already
//!   (`eval "$(agentenv env)"`, the hook): the value is still the store's
//!   secret and is masked.
//! - `launch --redact`: every value its operator layer (the `.env` files)
//!   filled, as the `agentenv.toml` beside each `.env` declares it.
//!
//! Every list holds only values that are masked ([`crate::core::masking`],
//! README "Masked or not"). (`harness run --redact` masks every value of the resolved
//!   runner and sandbox maps.)

use crate::core::{Action, Assembly, DecidedBy, LayerKind};

/// The kind of the layer that gave `key` its final value, if a layer did.
fn final_layer(asm: &Assembly, key: &std::ffi::OsStr) -> Option<LayerKind> {
    asm.touches(key)
        .iter()
        .rev()
        .find(|t| matches!(t.action, Action::Set | Action::Override | Action::Unset))
        .filter(|t| t.action != Action::Unset)
        .map(|t| asm.layers()[t.layer].info.kind)
}

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

/// `exec --redact`, `redact`: the session's sensitive values, plus each
/// value a store layer set that equals the base's (see the module doc).
pub(crate) fn session_sensitive(session: &crate::session::Session) -> Vec<(String, Vec<u8>)> {
    let mut out = session.sensitive_values();
    let asm = &session.assembly;
    for (k, v) in asm.current() {
        let store_set = matches!(
            final_layer(asm, k),
            Some(LayerKind::PlainFile | LayerKind::EnvScript)
        );
        if store_set
            && session.sensitivity(k).decided_by == DecidedBy::Base
            && session.masking(k).is_masked()
            && !out
                .iter()
                .any(|(n, _)| n.as_bytes() == k.as_encoded_bytes())
        {
            out.push((
                k.to_string_lossy().into_owned(),
                v.as_encoded_bytes().to_vec(),
            ));
        }
    }
    out
}
