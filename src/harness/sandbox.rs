//! The `env.sandbox` lines (reference §5.3) and the lint rules L1–L3 (§6).

use super::schema::{EnvMap, Harness};
use super::validate::OIDC_KEYS;

/// Keys reserved for runner infrastructure (plus the OIDC keys).
pub const RESERVED: [&str; 15] = [
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
];

/// `^[A-Za-z_][A-Za-z0-9_]*$`
pub fn is_posix_name(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

pub fn is_reserved(k: &str) -> bool {
    RESERVED.contains(&k) || OIDC_KEYS.contains(&k)
}

/// The sandbox entries kept (sorted by key, byte order) and the skip
/// warnings.
pub fn sandbox_entries(sandbox: &EnvMap) -> (Vec<(String, String)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut warnings = Vec::new();
    for (k, v) in sandbox {
        if !is_posix_name(k) {
            warnings.push(format!(
                "env.sandbox key {k:?} is not a valid POSIX identifier; skipping"
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

/// `export KEY='V'` with every `'` as `'\''`.
pub fn export_line(k: &str, v: &str) -> String {
    format!("export {k}='{}'", v.replace('\'', "'\\''"))
}

/// One diagnostic of `Lint()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub error: bool,
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = if self.error { "error" } else { "warning" };
        write!(f, "{sev}: {}: {}", self.field, self.message)
    }
}

/// L1–L3 on the resolved, expanded harness. `src_shown` gives the src as
/// reported (resolved against the fullsend dir unless it contains `${`).
pub fn lint(h: &Harness, src_shown: &dyn Fn(&str) -> String) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let c = &h.cfg;
    let runner_env_n = c.runner_env.as_ref().map_or(0, |m| m.len());
    let env_runner_n = c
        .env
        .as_ref()
        .and_then(|e| e.runner.as_ref())
        .map_or(0, |m| m.len());
    let env_sandbox_n = c
        .env
        .as_ref()
        .and_then(|e| e.sandbox.as_ref())
        .map_or(0, |m| m.len());
    if runner_env_n > 0 {
        let message = if env_runner_n == 0 {
            "runner_env is deprecated; use env.runner instead (see ADR 0055)"
        } else {
            "runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)"
        };
        out.push(Diagnostic {
            error: false,
            field: "runner_env",
            message: message.into(),
        });
    }
    if env_sandbox_n > 0 {
        if let Some(f) = c
            .host_files
            .iter()
            .flatten()
            .find(|f| f.expand && f.dest.contains(".env.d/"))
        {
            out.push(Diagnostic {
                error: false,
                field: "env.sandbox",
                message: format!(
                    "env.sandbox coexists with host_files entry {} (dest: {}); env.sandbox values take precedence on key collision",
                    src_shown(&f.src),
                    f.dest
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use std::path::Path;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn lines_sorted_filtered_quoted() {
        let x = h("env:\n  sandbox:\n    ZED: \"it's\"\n    A_1: '$x `y` \"z\" \\\\'\n    PATH: p\n    ACTIONS_ID_TOKEN_REQUEST_URL: u\n    1BAD: b\n    my-key: c\n    CLAUDE_CONFIG_DIR: c\n    TIRITH_X: t\n    E: ''\n");
        let sb = x.cfg.env.unwrap().sandbox.unwrap();
        let (kept, warns) = sandbox_entries(&sb);
        let lines: Vec<_> = kept.iter().map(|(k, v)| export_line(k, v)).collect();
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
                "env.sandbox key \"PATH\" is reserved for runner infrastructure; skipping",
                "env.sandbox key \"my-key\" is not a valid POSIX identifier; skipping",
            ]
        );
    }

    #[test]
    fn lint_rules() {
        let id = |s: &str| s.to_string();
        let d =
            |s: &str| -> Vec<String> { lint(&h(s), &id).iter().map(|d| d.to_string()).collect() };
        assert_eq!(
            d("runner_env: {A: b}\n"),
            ["warning: runner_env: runner_env is deprecated; use env.runner instead (see ADR 0055)"]
        );
        assert_eq!(
            d("runner_env: {A: b}\nenv: {runner: {B: c}}\n"),
            ["warning: runner_env: runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)"]
        );
        assert!(d("runner_env: {}\nenv: {runner: {B: c}}\n").is_empty());
        assert_eq!(
            d("env: {sandbox: {PATH: x}}\nhost_files:\n  - {src: a, dest: /x/.env.d/a.env}\n  - {src: b, dest: /w/.env.d/b.env, expand: true}\n  - {src: c, dest: /w/.env.d/c.env, expand: true}\n"),
            ["warning: env.sandbox: env.sandbox coexists with host_files entry b (dest: /w/.env.d/b.env); env.sandbox values take precedence on key collision"]
        );
        assert!(
            d("env: {sandbox: {}}\nhost_files: [{src: b, dest: .env.d/b, expand: true}]\n")
                .is_empty()
        );
    }
}
