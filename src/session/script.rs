//! `*.py` env files: run under the interpreter, read back JSON (as dotagents
//! does). The child's stdout is parsed, its stderr discarded; warnings
//! (returned to the caller, never printed) name the file and variable names,
//! never values.

use super::pyjson::{self, Value};
use crate::core::{ChangeSet, Env};
use crate::process::{self, RunError};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A key the file gave but that was not applied, and why (no value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    pub key: OsString,
    pub reason: String,
}

/// What running one env.py gave.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum ScriptResult {
    Changes(ChangeSet, Vec<Skip>),
    /// Contributes nothing; the warning saying why is in the caller's list.
    Failed(String),
}

/// Apply the per-key rules to the merged JSON pairs; one warning per key
/// not applied goes to `warnings`.
#[cfg(test)]
pub fn interpret(
    path: &Path,
    pairs: Vec<(pyjson::Text, Value)>,
    warnings: &mut Vec<String>,
) -> (ChangeSet, Vec<Skip>) {
    interpret_until(path, pairs, warnings, None).expect("no deadline")
}

/// [`interpret`] within the layer's deadline (checked every 1024 keys);
/// `None` once it passed (the layer then contributes nothing).
pub fn interpret_until(
    path: &Path,
    pairs: Vec<(pyjson::Text, Value)>,
    warnings: &mut Vec<String>,
    deadline: Option<std::time::Instant>,
) -> Option<(ChangeSet, Vec<Skip>)> {
    let mut out = ChangeSet::new();
    let mut skips = Vec::new();
    let p = path.display();
    for (n, (key, value)) in pairs.into_iter().enumerate() {
        if n % 1024 == 1023 && deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return None;
        }
        if key.is_empty()
            || key.contains(&('=' as u32))
            || key.contains(&0)
            || !pyjson::is_utf8(&key)
        {
            warnings.push(format!(
                "env.py {p}: skipped a key that is not a valid variable name"
            ));
            continue;
        }
        let k = OsString::from_vec(pyjson::encode(&key));
        let name = k.to_string_lossy().into_owned();
        let mut skip = |reason: String| {
            warnings.push(format!("env.py {p}: skipped {name} ({reason})"));
            skips.push(Skip {
                key: k.clone(),
                reason,
            });
        };
        match value {
            Value::Null => out.remove(k.clone()),
            Value::Str(s) => {
                if s.contains(&0) {
                    skip("value contains NUL".into());
                } else if !pyjson::is_utf8(&s) {
                    skip("value is not UTF-8".into());
                } else {
                    out.set(k.clone(), OsString::from_vec(pyjson::encode(&s)));
                }
            }
            other => skip(format!(
                "value is a JSON {}, not a string",
                other.type_name()
            )),
        }
    }
    Some((out, skips))
}

/// Run `file` as `<python> <file> --level L --agent L [--global]` in `env`;
/// what went wrong goes to `warnings`, in order. With `from` (an inherited
/// fd holding the bytes the trust digest read) the interpreter runs those
/// bytes as `file` ([`FROM_FD`]) instead of opening `file` again.
pub fn run(
    interpreter: Option<&Path>,
    (file, from): (&Path, Option<std::os::fd::RawFd>),
    level: &str,
    global: bool,
    env: &Env,
    timeout: Duration,
    warnings: &mut Vec<String>,
) -> ScriptResult {
    let p = file.display();
    let Some(py) = interpreter else {
        warnings.push(format!(
            "env.py could not run: {p}: no Python found (no python3 or python on PATH); \
             set AGENTS_PYTHON to an interpreter"
        ));
        return ScriptResult::Failed("no Python found".into());
    };
    let mut cmd = Command::new(py);
    if let Some(fd) = from {
        cmd.arg("-c").arg(FROM_FD).arg(fd.to_string());
    }
    cmd.arg(file)
        .args(["--level", level, "--agent", level])
        .env_clear()
        .envs(env);
    if global {
        cmd.arg("--global");
    }
    // One deadline for the layer: running the child and parsing its output
    // both count against --timeout.
    let deadline = std::time::Instant::now() + timeout;
    match process::run_captured(cmd, timeout, process::OUTPUT_LIMIT) {
        Err(RunError::Spawn(e)) => {
            // The file is there (the walk found it): what failed to start
            // is the interpreter.
            let why = crate::fsutil::io_kind(&e);
            warnings.push(format!(
                "env.py could not run: {p}: the Python interpreter {} could not be \
                 started ({why}); set AGENTS_PYTHON to a working one",
                py.display()
            ));
            ScriptResult::Failed(format!("interpreter could not be started ({why})"))
        }
        Err(RunError::Timeout) => {
            warnings.push(format!(
                "env.py timed out after {} s: {p}",
                fmt_secs(timeout)
            ));
            ScriptResult::Failed("timed out".into())
        }
        Err(RunError::TooLarge) => {
            warnings.push(format!("env.py output over 16 MiB: {p}"));
            ScriptResult::Failed("output over 16 MiB".into())
        }
        Err(RunError::Io(e)) => {
            warnings.push(format!(
                "env.py could not run: {p} ({})",
                crate::fsutil::io_kind(&e)
            ));
            ScriptResult::Failed("i/o error".into())
        }
        Ok(c) => {
            let code = exit_code(&c.status);
            if code != 0 {
                warnings.push(format!("env.py failed (exit {code}): {p}"));
                return ScriptResult::Failed(format!("exit {code}"));
            }
            match pyjson::parse_env_output_until(&c.stdout, Some(deadline)) {
                Err(pyjson::OutputError::Timeout) => {
                    warnings.push(format!(
                        "env.py timed out after {} s (parsing its output): {p}",
                        fmt_secs(timeout)
                    ));
                    ScriptResult::Failed("timed out".into())
                }
                Err(pyjson::OutputError::TooMany) => {
                    warnings.push(format!(
                        "env.py output holds more than {} values (the limit; nothing of it is used): {p}",
                        pyjson::MAX_OUTPUT_VALUES
                    ));
                    ScriptResult::Failed("too many values".into())
                }
                Err(pyjson::OutputError::Json(msg)) => {
                    warnings.push(format!("env.py output not JSON: {p} ({msg})"));
                    ScriptResult::Failed(format!("output not JSON ({msg})"))
                }
                Ok(pairs) => match interpret_until(file, pairs, warnings, Some(deadline)) {
                    Some((cs, skips)) => ScriptResult::Changes(cs, skips),
                    None => {
                        warnings.push(format!(
                            "env.py timed out after {} s (applying its output): {p}",
                            fmt_secs(timeout)
                        ));
                        ScriptResult::Failed("timed out".into())
                    }
                },
            }
        }
    }
}

/// Python run as `python -c FROM_FD N FILE ARGS…`: reads the source from
/// the inherited fd N (from its start), then runs it as `python FILE ARGS…`
/// would: `sys.argv` is `[FILE, ARGS…]`, `__file__` is FILE, `__name__` is
/// `__main__` and `sys.path[0]` is FILE's real directory (sibling imports
/// work).
pub const FROM_FD: &str = include_str!("from_fd.py");

/// Python's `returncode`: the exit status, or minus the signal number.
pub fn exit_code(s: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().or_else(|| s.signal().map(|n| -n)).unwrap_or(1)
}

/// Seconds for a message: `30`, `0.5`.
pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{s}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 22 #14: applying the keys counts against the layer's
    /// deadline too.
    #[test]
    fn applying_the_keys_stops_at_the_deadline() {
        let pairs: Vec<(pyjson::Text, Value)> = (0..5000)
            .map(|i| {
                let k: pyjson::Text = format!("K{i}").chars().map(|c| c as u32).collect();
                (k, Value::Str(vec![0x31]))
            })
            .collect();
        let mut w = Vec::new();
        let past = Some(std::time::Instant::now());
        assert!(interpret_until(Path::new("/x/env.py"), pairs.clone(), &mut w, past).is_none());
        let later = Some(std::time::Instant::now() + Duration::from_secs(3600));
        let (cs, _) = interpret_until(Path::new("/x/env.py"), pairs, &mut w, later).unwrap();
        assert_eq!(cs.assigned().len(), 5000);
        assert!(w.is_empty());
    }

    #[test]
    fn per_key_rules() {
        let pairs = pyjson::parse_env_output(
            br#"{"A": "1", "": "x", "B=C": "x", "N": null, "I": 3, "F": 1.5, "L": [], "D": {}, "T": true, "Z": "a\u0000b", "S": "\udc80", "A-B": "ok"}"#,
        )
        .unwrap();
        let mut warnings = Vec::new();
        let (cs, skips) = interpret(Path::new("/x/env.py"), pairs, &mut warnings);
        assert_eq!(cs.get("A").unwrap(), "1");
        assert_eq!(cs.get("A-B").unwrap(), "ok");
        assert!(cs.removed().contains(&OsString::from("N")));
        let reasons: Vec<_> = skips.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(
            reasons,
            vec![
                "value is a JSON int, not a string",
                "value is a JSON float, not a string",
                "value is a JSON list, not a string",
                "value is a JSON dict, not a string",
                "value is a JSON bool, not a string",
                "value contains NUL",
                "value is not UTF-8",
            ]
        );
        // One warning per key not applied, in order, naming keys only.
        assert_eq!(warnings.len(), 2 + reasons.len());
        assert_eq!(
            warnings[0],
            "env.py /x/env.py: skipped a key that is not a valid variable name"
        );
        assert_eq!(
            warnings[2],
            "env.py /x/env.py: skipped I (value is a JSON int, not a string)"
        );
    }
}
