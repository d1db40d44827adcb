//! fullsend's `Lint()` on the resolved harness: L1/L2 (`runner_env`
//! deprecation), the implicit runtime-fetch warning, the `GITHUB_ISSUE_URL`
//! deprecation per entry, L3 (`env.sandbox` beside an expanded `.env.d/` host
//! file). The file checks of `lint` are findings too (errors), added by the
//! caller.

use super::schema::Harness;
use super::shown_key;

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// An error (`lint` exits 1), else a warning.
    pub error: bool,
    /// The field it is about (`env.sandbox`, `host_files[0].src`, …).
    pub field: String,
    /// What is wrong (never a value).
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = if self.error { "error" } else { "warning" };
        write!(f, "{sev}: {}: {}", self.field, self.message)
    }
}

fn warning(field: impl Into<String>, message: impl Into<String>) -> Diagnostic {
    Diagnostic {
        error: false,
        field: field.into(),
        message: message.into(),
    }
}

pub const IMPLICIT_RUNTIME_FETCH: &str = "allowed_remote_resources is set without allow_runtime_fetch: true; runtime fetching is enabled for backward compatibility, but this is deprecated — add allow_runtime_fetch: true to the harness to silence this warning";

pub const DEPRECATED_ISSUE_URL: &str =
    "GITHUB_ISSUE_URL is deprecated; use TRIGGER_ENTITY_URL instead (see #6610)";

/// The diagnostics of `h` (the resolved harness, before expansion: the
/// `GITHUB_ISSUE_URL` check reads the values as written). `src_shown`
/// gives a host file's src as reported (resolved against the fullsend dir
/// unless it contains `${`).
pub fn lint(h: &Harness, src_shown: &dyn Fn(&str) -> String) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let c = &h.cfg;
    let len = |m: Option<&super::schema::EnvMap>| m.map_or(0, |m| m.len());
    let runner = c.env.as_ref().and_then(|e| e.runner.as_ref());
    let sandbox = c.env.as_ref().and_then(|e| e.sandbox.as_ref());
    if len(c.runner_env.as_ref()) > 0 {
        out.push(warning(
            "runner_env",
            if len(runner) == 0 {
                "runner_env is deprecated; use env.runner instead (see ADR 0055)"
            } else {
                "runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)"
            },
        ));
    }
    if !h.allow_runtime_fetch
        && h.allowed_remote_resources
            .as_ref()
            .is_some_and(|v| !v.is_empty())
    {
        out.push(warning("allowed_remote_resources", IMPLICIT_RUNTIME_FETCH));
    }
    for (field, m) in [("env.runner", runner), ("env.sandbox", sandbox)] {
        for (k, v) in m.into_iter().flatten() {
            if v.contains("GITHUB_ISSUE_URL") {
                out.push(warning(
                    format!("{field}.{}", shown_key(k)),
                    DEPRECATED_ISSUE_URL,
                ));
            }
        }
    }
    for (i, f) in c.host_files.iter().flatten().enumerate() {
        if f.src.contains("GITHUB_ISSUE_URL") {
            out.push(warning(
                format!("host_files[{i}].src"),
                DEPRECATED_ISSUE_URL,
            ));
        }
    }
    if len(sandbox) > 0 {
        if let Some(f) = c
            .host_files
            .iter()
            .flatten()
            .find(|f| f.expand && f.dest.contains(".env.d/"))
        {
            out.push(warning(
                "env.sandbox",
                format!(
                    "env.sandbox coexists with host_files entry {} (dest: {}); env.sandbox values take precedence on key collision",
                    src_shown(&f.src),
                    f.dest
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;
    use std::path::Path;

    fn d(s: &str) -> Vec<String> {
        let h = parse_harness(s, Path::new("t.yaml")).unwrap();
        lint(&h, &|s| s.to_string())
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    #[test]
    fn lint_rules() {
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
    }

    #[test]
    fn runtime_fetch_and_issue_url_warnings() {
        assert_eq!(
            d("allowed_remote_resources: ['https://x/']\n"),
            [format!(
                "warning: allowed_remote_resources: {IMPLICIT_RUNTIME_FETCH}"
            )]
        );
        assert!(
            d("allowed_remote_resources: ['https://x/']\nallow_runtime_fetch: true\n").is_empty()
        );
        assert!(d("allowed_remote_resources: []\n").is_empty());
        assert_eq!(
            d("runner_env: {R: '${GITHUB_ISSUE_URL}'}\nenv:\n  runner: {Z: '${GITHUB_ISSUE_URL}', A: 'x$GITHUB_ISSUE_URL'}\n  sandbox: {S: GITHUB_ISSUE_URL}\nhost_files: [{src: '${GITHUB_ISSUE_URL}.txt', dest: /tmp/x}]\n"),
            [
                "warning: runner_env: runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)".to_string(),
                format!("warning: env.runner.A: {DEPRECATED_ISSUE_URL}"),
                format!("warning: env.runner.Z: {DEPRECATED_ISSUE_URL}"),
                format!("warning: env.sandbox.S: {DEPRECATED_ISSUE_URL}"),
                format!("warning: host_files[0].src: {DEPRECATED_ISSUE_URL}"),
            ]
        );
    }
}
