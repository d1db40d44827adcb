//! Which values the masker gets: the `(name, value)` pairs of a session,
//! of `launch`'s operator layer.
//!
//! `interim_session_sensitive` stands in for `Session::sensitive_values`
//! (SPEC §14.1, `agentenv.toml`): every key whose final value was set by a
//! store layer (a plain env file or an `env.py`), except the variables
//! agentenv computes itself, which are public — and a proxy URL holding a
//! user or password, which is sensitive whoever set it.

use crate::core::{Action, Assembly, LayerKind};

/// The names SPEC §14.1 lists as computed by agentenv, hence public.
fn public_name(name: &str) -> bool {
    matches!(
        name,
        "AGENTS_HOME"
            | "AGENTS_PROJECT_ROOT"
            | "AGENTS_PYTHON"
            | "AGENTS_PYTHONPATH"
            | "PATH"
            | "PYTHONPATH"
            | "AGENTS_HARNESS"
            | "AGENTS_VENDOR"
            | "AGENTS_MODEL"
            | "AGENTS_AGENT"
    ) || name.ends_with("_OVERLAY_ROOT")
}

fn proxy_name(name: &str) -> bool {
    name == "AGENTS_PROXY" || name.ends_with("_PROXY") || name.ends_with("_proxy")
}

/// A URL with a user or password (`scheme://user:pw@host`, `user@host`).
fn has_userinfo(value: &[u8]) -> bool {
    let rest = match value.windows(3).position(|w| w == b"://") {
        Some(i) => &value[i + 3..],
        None => value,
    };
    let authority = rest.split(|&b| b == b'/').next().unwrap_or(rest);
    authority.contains(&b'@')
}

/// The layer that gave `key` its final value, if any layer did.
fn final_layer(asm: &Assembly, key: &std::ffi::OsStr) -> Option<LayerKind> {
    asm.touches(key)
        .iter()
        .rev()
        .find(|t| matches!(t.action, Action::Set | Action::Override | Action::Unset))
        .filter(|t| t.action != Action::Unset)
        .map(|t| asm.layers()[t.layer].info.kind)
}

fn pair(k: &std::ffi::OsStr, v: &std::ffi::OsStr) -> (String, Vec<u8>) {
    (
        k.to_string_lossy().into_owned(),
        v.as_encoded_bytes().to_vec(),
    )
}

/// The sensitive `(name, value)` pairs of an assembled session (interim
/// rule, see the module doc).
pub(crate) fn interim_session_sensitive(asm: &Assembly) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (k, v) in asm.current() {
        let name = k.to_string_lossy();
        if proxy_name(&name) {
            if has_userinfo(v.as_encoded_bytes()) {
                out.push(pair(k, v));
            }
            continue;
        }
        if public_name(&name) {
            continue;
        }
        if matches!(
            final_layer(asm, k),
            Some(LayerKind::PlainFile | LayerKind::EnvScript)
        ) {
            out.push(pair(k, v));
        }
    }
    out
}

/// `launch`: every value the operator layer (its `.env` files) filled.
pub(crate) fn operator_sensitive(asm: &Assembly) -> Vec<(String, Vec<u8>)> {
    asm.current()
        .iter()
        .filter(|(k, _)| matches!(final_layer(asm, k), Some(LayerKind::DotenvFile)))
        .map(|(k, v)| pair(k, v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo() {
        assert!(has_userinfo(b"http://u:p@proxy:8080"));
        assert!(has_userinfo(b"u@proxy"));
        assert!(!has_userinfo(b"http://proxy:8080/a@b"));
        assert!(!has_userinfo(b"http://proxy:8080"));
    }

    #[test]
    fn public_names() {
        assert!(public_name("PATH"));
        assert!(public_name("FOO_OVERLAY_ROOT"));
        assert!(!public_name("GH_TOKEN"));
    }
}
