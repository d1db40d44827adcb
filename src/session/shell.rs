//! Plain env files sourced by bash (as dotagents does): one bash process, `env
//! -0` snapshots before and after `source`, the change set is their
//! difference. The script is the reference's, byte for byte; the file's path
//! is `$1`, never spliced into the script.

use crate::core::{ChangeSet, Env};
use crate::process::{self, RunError};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The reference's `_SOURCE_SCRIPT`.
pub const SOURCE_SCRIPT: &str = include_str!("source.bash");

const AFTER: &[u8] = b"@@dotagents:after@@";
const NATIVE: &[u8] = b"@@dotagents:native@@";

/// Bash's own variables, never reported as the file's.
pub fn is_bash_own(key: &[u8]) -> bool {
    matches!(key, b"_" | b"PWD" | b"OLDPWD" | b"SHLVL")
        || key.starts_with(b"MSYSTEM")
        || key.starts_with(b"MINGW_")
        || key.starts_with(b"MSYS2_")
}

fn parse_entries(records: &[&[u8]]) -> indexmap::IndexMap<Vec<u8>, Vec<u8>> {
    let mut out = indexmap::IndexMap::new();
    for r in records {
        let Some(eq) = r.iter().position(|c| *c == b'=') else {
            continue;
        };
        let (k, v) = (&r[..eq], &r[eq + 1..]);
        if is_bash_own(k) {
            continue;
        }
        out.insert(k.to_vec(), v.to_vec());
    }
    out
}

/// The change set from the script's stdout, or `None` when the marker is
/// missing.
pub fn changes_from_output(stdout: &[u8]) -> Option<ChangeSet> {
    let records: Vec<&[u8]> = stdout.split(|c| *c == 0).collect();
    let cut = records.iter().position(|r| *r == AFTER)?;
    let tail = &records[cut + 1..];
    let native_at = tail.iter().position(|r| *r == NATIVE).unwrap_or(tail.len());
    let before = parse_entries(&records[..cut]);
    let after = parse_entries(&tail[..native_at]);
    let mut cs = ChangeSet::new();
    for k in before.keys() {
        if !after.contains_key(k) {
            cs.remove(OsString::from_vec(k.clone()));
        }
    }
    for (k, v) in &after {
        if before.get(k) == Some(v) {
            continue;
        }
        cs.set(OsString::from_vec(k.clone()), OsString::from_vec(v.clone()));
    }
    Some(cs)
}

/// The warning for a plain file that failed: `env file source failed:
/// FILE`, then where and why when the project's dotenv reader sees a quote
/// that never closes (the usual breakage; its messages name the line's
/// shape and the key, never a value), and that the whole file was dropped.
pub fn failed_plain_file(file: &Path, text: Option<&[u8]>) -> String {
    use crate::dotenv::DiagnosticKind as K;
    let found = text.and_then(|t| {
        crate::dotenv::parse_bytes(t)
            .diagnostics
            .into_iter()
            .find(|d| matches!(d.kind, K::Unterminated | K::Swallowed))
    });
    match found {
        Some(d) => format!(
            "env file source failed: {}:{}: {}; the whole file was dropped (nothing it sets is loaded)",
            file.display(),
            d.line,
            d.message
        ),
        None => format!(
            "env file source failed: {}; the whole file was dropped (a syntax error, an exit or a failing last command; bash -n shows a syntax error's line)",
            file.display()
        ),
    }
}

/// Why sourcing failed (the warning is in the caller's list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    Failed,
    CannotRun,
    Timeout,
    TooLarge,
}

/// Source `file` with `bash` in `env` (from `from` instead, when given: a
/// copy of the bytes the trust digest read; `file` still names it in
/// messages); a failure's warning goes to `warnings`.
pub fn source(
    bash: &Path,
    file: &Path,
    from: Option<&Path>,
    env: &Env,
    timeout: Duration,
    warnings: &mut Vec<String>,
) -> Result<ChangeSet, SourceError> {
    let p = file.display();
    let mut cmd = Command::new(bash);
    cmd.arg("-c")
        .arg(SOURCE_SCRIPT)
        .arg("bash")
        .arg(from.unwrap_or(file))
        .env_clear()
        .envs(env);
    match process::run_captured(cmd, timeout, process::OUTPUT_LIMIT) {
        Err(RunError::Spawn(e)) | Err(RunError::Io(e)) => {
            warnings.push(format!(
                "cannot source env file (no bash?): {p} ({})",
                crate::fsutil::io_kind(&e)
            ));
            Err(SourceError::CannotRun)
        }
        Err(RunError::Timeout) => {
            warnings.push(format!(
                "env file timed out after {} s: {p}",
                super::script::fmt_secs(timeout)
            ));
            Err(SourceError::Timeout)
        }
        Err(RunError::TooLarge) => {
            warnings.push(format!("env file output over 16 MiB: {p}"));
            Err(SourceError::TooLarge)
        }
        Ok(c) => {
            let parsed = if c.status.success() {
                changes_from_output(&c.stdout)
            } else {
                None
            };
            match parsed {
                Some(cs) => Ok(cs),
                None => {
                    let text = crate::fsutil::read_input(from.unwrap_or(file), 16 << 20).ok();
                    warnings.push(failed_plain_file(file, text.as_deref()));
                    Err(SourceError::Failed)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_difference() {
        let out = b"A=1\0B=2\0_=x\0C=3\0@@dotagents:after@@\0A=1\0B=9\0D=4\0SHLVL=2\0";
        let cs = changes_from_output(out).unwrap();
        assert_eq!(cs.get("B").unwrap(), "9");
        assert_eq!(cs.get("D").unwrap(), "4");
        assert!(cs.get("A").is_none());
        assert!(cs.removed().contains(&OsString::from("C")));
        assert!(changes_from_output(b"A=1\0").is_none());
    }

    #[test]
    fn real_bash_round_trip() {
        let Some(bash) =
            super::super::paths::which("bash", std::env::var_os("PATH").as_deref(), Path::new("/"))
        else {
            return;
        };
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("env");
        std::fs::write(&f, "X=1\nexport Y='a b'\nunset GONE\nf() { :; }\n").unwrap();
        let mut env = Env::new();
        env.insert("PATH".into(), "/usr/bin:/bin".into());
        env.insert("GONE".into(), "g".into());
        let mut warnings = Vec::new();
        let cs = source(
            &bash,
            &f,
            None,
            &env,
            Duration::from_secs(10),
            &mut warnings,
        )
        .unwrap();
        assert_eq!(cs.get("X").unwrap(), "1");
        assert_eq!(cs.get("Y").unwrap(), "a b");
        assert!(cs.get("BASH_FUNC_f%%").is_some());
        assert!(cs.removed().contains(&OsString::from("GONE")));
        std::fs::write(&f, "X=1\nexit 0\n").unwrap();
        assert!(warnings.is_empty());
        assert_eq!(
            source(
                &bash,
                &f,
                None,
                &env,
                Duration::from_secs(10),
                &mut warnings
            ),
            Err(SourceError::Failed)
        );
        assert_eq!(warnings, [failed_plain_file(&f, Some(b"X=1\nexit 0\n"))]);
        assert!(warnings[0].starts_with(&format!("env file source failed: {};", f.display())));
    }
}
