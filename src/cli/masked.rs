//! Which values `launch --redact` masks: every value its operator layer
//! (the `.env` files) filled. (A session's are
//! [`crate::session::Session::values_to_mask`]; `harness run --redact`
//! masks every value of the resolved runner and sandbox maps.)

use crate::core::{Action, Assembly, LayerKind};

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
