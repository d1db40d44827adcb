//! The `env.sandbox` lines (fullsend's `buildSandboxEnvLines`): invalid and
//! reserved keys skipped with a warning, the rest sorted by key (byte order),
//! each as `export KEY='V'` with `'` written `'\''`. Values are bytes.

use super::expansion::{is_denied, ValueMap};
use super::shown_key;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;

/// Keys reserved for runner infrastructure (plus the expansion deny list).
pub const RESERVED: [&str; 19] = [
    "PATH",
    "HOME",
    "SHELL",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "FULLSEND_FETCH_URL",
    "FULLSEND_FETCH_TOKEN",
    "FULLSEND_OUTPUT_DIR",
    "FULLSEND_OUTPUT_SCHEMA",
    "FULLSEND_OUTPUT_FILE",
    "FULLSEND_TARGET_REPO_DIR",
    "FULLSEND_ROLE",
    "FULLSEND_SLUG",
    // written per iteration into .fullsend/iteration.env (fullsend main)
    "FULLSEND_TIMEOUT_MINUTES",
    "FULLSEND_ITERATION_DEADLINE",
    "TRACEPARENT",
    "FULLSEND_RUNNER_PATH",
];

pub fn is_reserved(k: &str) -> bool {
    RESERVED.contains(&k) || is_denied(k)
}

/// The sandbox entries kept (sorted by key, byte order) and the skip
/// warnings. A key is named up to its valid prefix (it can carry a value).
pub fn sandbox_entries(sandbox: &ValueMap) -> (Vec<(String, OsString)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut warnings = Vec::new();
    for (k, v) in sandbox {
        if !crate::compat::ident::is_name(k.as_bytes()) {
            warnings.push(format!(
                "env.sandbox key {:?} is not a valid POSIX identifier; skipping",
                shown_key(k)
            ));
        } else if is_reserved(k) {
            warnings.push(format!(
                "env.sandbox key {k:?} is reserved for runner infrastructure; skipping"
            ));
        } else {
            kept.push((k.clone(), v.clone()));
        }
    }
    (kept, warnings)
}

/// `export KEY='V'` with every `'` as `'\''`, as bytes
/// ([`crate::compat::sh::single_quote`], fullsend's rule).
pub fn export_line(k: &str, v: &std::ffi::OsStr) -> Vec<u8> {
    let mut out = Vec::with_capacity(k.len() + v.len() + 12);
    out.extend_from_slice(b"export ");
    out.extend_from_slice(k.as_bytes());
    out.push(b'=');
    crate::compat::sh::single_quote_into(&mut out, v.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_sorted_filtered_quoted() {
        let sb: ValueMap = [
            ("ZED", "it's"),
            ("A_1", "$x `y` \"z\" \\\\"),
            ("PATH", "p"),
            ("ACTIONS_ID_TOKEN_REQUEST_URL", "u"),
            ("OPENAI_API_KEY", "k"),
            ("TRACEPARENT", "t"),
            ("FULLSEND_RUNNER_PATH", "r"),
            ("1BAD", "b"),
            ("my-key", "c"),
            ("GH_TOKEN=ghp_secret", "c"),
            ("CLAUDE_CONFIG_DIR", "c"),
            ("TIRITH_X", "t"),
            ("E", ""),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), OsString::from(v)))
        .collect();
        let (kept, warns) = sandbox_entries(&sb);
        let lines: Vec<String> = kept
            .iter()
            .map(|(k, v)| String::from_utf8(export_line(k, v)).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                "export A_1='$x `y` \"z\" \\\\'",
                "export CLAUDE_CONFIG_DIR='c'",
                "export E=''",
                "export TIRITH_X='t'",
                "export ZED='it'\\''s'",
            ]
        );
        assert_eq!(
            warns,
            [
                "env.sandbox key \"1BAD\" is not a valid POSIX identifier; skipping",
                "env.sandbox key \"ACTIONS_ID_TOKEN_REQUEST_URL\" is reserved for runner infrastructure; skipping",
                "env.sandbox key \"FULLSEND_RUNNER_PATH\" is reserved for runner infrastructure; skipping",
                "env.sandbox key \"GH_TOKEN…\" is not a valid POSIX identifier; skipping",
                "env.sandbox key \"OPENAI_API_KEY\" is reserved for runner infrastructure; skipping",
                "env.sandbox key \"PATH\" is reserved for runner infrastructure; skipping",
                "env.sandbox key \"TRACEPARENT\" is reserved for runner infrastructure; skipping",
                "env.sandbox key \"my-key\" is not a valid POSIX identifier; skipping",
            ]
        );
        assert_eq!(
            export_line("K", std::ffi::OsStr::from_bytes(b"a\xff'b")),
            b"export K='a\xff'\\''b'"
        );
    }
}
