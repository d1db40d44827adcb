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
//!   filled. (`harness run --redact` masks every value of the resolved
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

/// `launch`: every value the operator layer (its `.env` files) filled.
pub(crate) fn operator_sensitive(asm: &Assembly) -> Vec<(String, Vec<u8>)> {
    asm.current()
        .iter()
        .filter(|(k, _)| matches!(final_layer(asm, k), Some(LayerKind::DotenvFile)))
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.as_encoded_bytes().to_vec(),
            )
        })
        .collect()
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
