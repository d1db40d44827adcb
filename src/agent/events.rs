//! The hook events without the command line (`agentenv hook CLIENT
//! EVENT`): each reads its event, does its work and answers with data —
//! the bytes for stdout and the exit status ([`Answer`]). The command line
//! (`cli/agent.rs`) dispatches and prints; the session env a start hook
//! writes is `env`'s, which the command line runs between
//! [`session_env_file`] and [`after_session_env`].
//!
//! The hook events only one client has (docs/agents.md): Gemini CLI's
//! `after-tool` reads the AfterTool event; when the tool's result
//! (`tool_response.llmContent`) holds a form of a sensitive value, it
//! answers `decision: deny` with the masked result as the `reason`, which
//! Gemini CLI sends the model instead of the result ("Tool result
//! blocked: …"); otherwise nothing. OpenCode's `shell-env` is `env`'s
//! public variables as JSON, for the plugin's `shell.env`.

use super::client::Client;
use super::Error;
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest hook event read (a 1 MiB command is well inside).
const MAX_EVENT: u64 = 64 << 20;

/// What the user sees at each session start under `--export-values`
/// (the client shows a hook's `systemMessage` to the user).
pub(crate) const EXPORT_VALUES_WARNING: &str = "agentenv: this session's environment holds the values of the sensitive variables (init --export-values): the agent can print them into its context. Run `agentenv init claude` (or codex) without --export-values to keep them out.";

/// A hook's answer: a line of JSON for stdout (none: nothing), and the
/// exit status.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub stdout: Option<String>,
    pub status: i32,
}

impl Answer {
    const NOTHING: Answer = Answer {
        stdout: None,
        status: 0,
    };

    fn json(v: &Value) -> Answer {
        let mut s = serde_json::to_string(v).expect("a Value serializes");
        s.push('\n');
        Answer {
            stdout: Some(s),
            status: 0,
        }
    }

    /// A non-blocking hook error: the message on stderr, exit 1; the
    /// client then goes on as if there were no hook (`then` says how).
    fn soft(msg: impl std::fmt::Display, then: &str) -> Answer {
        crate::error!("{msg}; {then}");
        Answer {
            stdout: None,
            status: 1,
        }
    }
}

/// `hook CLIENT session-start`, before `env` runs: the client's session
/// env file (`$CLAUDE_ENV_FILE` / `$CODEX_ENV_FILE`), or `None` — said on
/// stderr — when it is not set (Codex before 0.172 has none: its
/// PreToolUse hook brings the public variables too).
pub(crate) fn session_env_file(client: Client, base: &crate::core::Env) -> Option<PathBuf> {
    let var = client.facts().env_file_var;
    let file = crate::core::get(base, var).filter(|v| !v.is_empty());
    if file.is_none() {
        if client.facts().env_file_optional {
            crate::info!(
                "hook {} session-start: ${var} is not set; nothing written",
                client.name()
            );
        } else {
            crate::warn!(
                "hook {} session-start: ${var} is not set; nothing written",
                client.name()
            );
        }
    }
    file.map(PathBuf::from)
}

/// `hook CLIENT session-start`, after `env` wrote the session's variables
/// into `file`: the functions the rewritten commands call ([`FUNCTIONS`],
/// no value in them) into `file` too, and what the user must see — the
/// trust gate's refusal of the project store, `--export-values`' warning
/// (also on stderr) — as the hook's `systemMessage` (the client shows it;
/// a SessionStart hook's stderr it does not).
///
/// [`FUNCTIONS`]: super::hook::FUNCTIONS
pub(crate) fn after_session_env(
    client: Client,
    file: &Path,
    export_values: bool,
    base: &crate::core::Env,
) -> Result<Answer, String> {
    let var = client.facts().env_file_var;
    let current = std::fs::read_to_string(file).unwrap_or_default();
    crate::fsutil::write_atomic(
        file,
        super::hook::with_functions(&current).as_bytes(),
        crate::fsutil::Mode::Private,
        false,
    )
    .map_err(|e| {
        format!(
            "${var} {}: cannot write it ({})",
            file.display(),
            crate::fsutil::io_kind(&e)
        )
    })?;
    let mut messages = Vec::new();
    if let Some(w) = project_refused(base) {
        messages.push(format!(
            "agentenv: {w}; until then this session has the other stores' variables only"
        ));
    }
    if export_values {
        crate::warn!("{}", EXPORT_VALUES_WARNING.trim_start_matches("agentenv: "));
        messages.push(EXPORT_VALUES_WARNING.to_string());
    }
    if messages.is_empty() {
        return Ok(Answer::NOTHING);
    }
    Ok(Answer::json(
        &json!({ "systemMessage": messages.join("\n") }),
    ))
}

/// The trust gate's refusal of the session's project store, as `env
/// --require-trust` found it (its warning, names only), when there is one:
/// the project root is `$AGENTS_PROJECT_ROOT`, else `$CLAUDE_PROJECT_DIR`,
/// else the current directory, and the user store is never refused.
fn project_refused(base: &crate::core::Env) -> Option<String> {
    let var = |k: &str| {
        crate::core::get(base, k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cwd = std::env::current_dir().ok()?;
    let root = var("AGENTS_PROJECT_ROOT")
        .or_else(|| var("CLAUDE_PROJECT_DIR"))
        .map(|r| cwd.join(r))
        .unwrap_or(cwd);
    let store = root.join(".agents");
    let home = var("HOME");
    if !store.is_dir() || home.is_some_and(|h| h.join(".agents") == store) {
        return None;
    }
    let bounds = crate::session::trust::Bounds::from_env(base);
    crate::session::gate::decide(&root, base, bounds).warning()
}

/// The event on `input` as JSON; `what` starts each message, `too_large`
/// ends the one for an event over [`MAX_EVENT`].
fn read_event(input: &mut dyn Read, what: &str, too_large: &str) -> Result<Value, String> {
    let mut raw = Vec::new();
    input
        .take(MAX_EVENT + 1)
        .read_to_end(&mut raw)
        .map_err(|e| {
            format!(
                "{what}: cannot read the event on stdin ({})",
                crate::fsutil::io_kind(&e)
            )
        })?;
    if raw.len() as u64 > MAX_EVENT {
        return Err(format!("{what}: the event on stdin is {too_large}"));
    }
    serde_json::from_slice(&raw).map_err(|e| {
        format!(
            "{what}: the event on stdin is not valid JSON (line {}, column {})",
            e.line(),
            e.column()
        )
    })
}

/// `hook CLIENT pre-tool-use`: the event on `input` through
/// [`super::hook::decide`]; a failure is a non-blocking error (the tool
/// runs unchanged).
pub(crate) fn pre_tool_use(client: Client, input: &mut dyn Read) -> Answer {
    let then = "the tool runs unchanged (without the session's sensitive variables)";
    let what = format!("hook {} pre-tool-use", client.name());
    let too_large = format!("larger than {} MiB", MAX_EVENT >> 20);
    let event = match read_event(input, &what, &too_large) {
        Ok(v) => v,
        Err(m) => return Answer::soft(m, then),
    };
    let base = crate::core::process_env();
    match super::hook::decide(client, &event, &base) {
        Ok(None) => Answer::NOTHING,
        Ok(Some(v)) => Answer::json(&v),
        Err(msg) => Answer::soft(format!("{what}: {msg}"), then),
    }
}

/// Every string in `v`, joined by newlines (a Gemini `llmContent`: a
/// string, a part `{text}` or a list of them).
fn texts(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| texts(x, out)),
        Value::Object(m) => m.values().for_each(|x| texts(x, out)),
        _ => {}
    }
}

/// The answer to Gemini CLI's AfterTool event: `None` when the result
/// holds no form of a sensitive value (of `values`).
pub(crate) fn mask_tool_result(event: &Value, values: super::entry::Values) -> Option<Value> {
    let response = event.get("tool_response")?;
    let mut parts = Vec::new();
    if let Some(c) = response.get("llmContent") {
        texts(c, &mut parts);
    }
    if let Some(e) = response.get("error") {
        texts(e, &mut parts);
    }
    let text = parts.join("\n");
    let masker = crate::mask::Masker::new(values);
    if masker.is_empty() || masker.find_iter(text.as_bytes()).next().is_none() {
        return None;
    }
    let masked = String::from_utf8_lossy(&masker.mask(text.as_bytes())).into_owned();
    Some(json!({
        "decision": "deny",
        "reason": format!("(agentenv masked secret values in this result)\n{masked}"),
    }))
}

/// `hook gemini after-tool`: the event on `input`, the result masked
/// with the session's sensitive values ([`mask_tool_result`]).
pub(crate) fn after_tool(client: Client, input: &mut dyn Read) -> Answer {
    let then = "the result is not masked by agentenv";
    let what = "hook gemini after-tool";
    let event = match read_event(input, what, "too large") {
        Ok(v) => v,
        Err(m) => return Answer::soft(m, then),
    };
    let base = crate::core::process_env();
    let entry = match super::entry::make(&base, client) {
        Ok(Some(made)) => made.entry,
        Ok(None) => return Answer::NOTHING,
        Err(m) => return Answer::soft(format!("{what}: {m}"), then),
    };
    let values = match super::entry::load_entry(&entry) {
        Ok((_, v)) => v,
        Err(m) => return Answer::soft(format!("{what}: {m}"), then),
    };
    match mask_tool_result(&event, values) {
        None => Answer::NOTHING,
        Some(v) => Answer::json(&v),
    }
}

/// `hook CLIENT wrap --entry ENTRY`: fd 0 is the pipe the shell reads the
/// FIFOs' directory, the exports (ended by NUL) and then a line when the
/// command's output is out from (`agent::relay`); fds 1 and 2 are the
/// command's real stdout and stderr.
pub(crate) fn run_command_helper(entry: &Path) -> Result<(), Error> {
    use std::os::fd::AsFd;
    let sync = match rustix::io::dup(std::io::stdin().as_fd()) {
        Ok(fd) => std::fs::File::from(fd),
        Err(_) => {
            return Err(Error::Usage(
                "hook run: stdin is not open (internal command)".into(),
            ))
        }
    };
    let (prologue, vars) = super::entry::load_entry(entry).map_err(Error::Runtime)?;
    let fifos = super::relay::Fifos::create().map_err(|e| {
        Error::Runtime(format!(
            "cannot create the masking FIFOs ({})",
            crate::fsutil::io_kind(&e)
        ))
    })?;
    super::relay::serve(fifos, sync, &prologue, vars).map_err(|e| {
        Error::Runtime(format!(
            "masking the command's output failed ({})",
            crate::fsutil::io_kind(&e)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_that_is_not_json_is_a_soft_error_with_its_place() {
        let e = read_event(
            &mut &b"{\n  \"a\": nope}"[..],
            "hook claude pre-tool-use",
            "x",
        )
        .unwrap_err();
        assert_eq!(
            e,
            "hook claude pre-tool-use: the event on stdin is not valid JSON (line 2, column 9)"
        );
        let a = pre_tool_use(Client::Claude, &mut &b"[1,"[..]);
        assert_eq!(
            a,
            Answer {
                stdout: None,
                status: 1
            }
        );
        let a = after_tool(Client::Gemini, &mut &b""[..]);
        assert_eq!(a.status, 1);
    }

    #[test]
    fn a_tool_result_is_answered_only_when_it_holds_a_sensitive_value() {
        let values = || vec![("TOKEN".to_string(), b"s3cr3t-value-4711".to_vec())];
        let event =
            json!({"tool_response": {"llmContent": [{"text": "got s3cr3t-value-4711 ok"}]}});
        let a = mask_tool_result(&event, values()).expect("masked");
        assert_eq!(a["decision"], "deny");
        let reason = a["reason"].as_str().unwrap();
        assert!(!reason.contains("s3cr3t-value-4711"), "{reason}");
        assert!(reason.starts_with("(agentenv masked secret values in this result)\n"));
        assert!(reason.contains("[REDACTED:TOKEN]"), "{reason}");
        let error = json!({"tool_response": {"error": "failed: s3cr3t-value-4711"}});
        assert!(mask_tool_result(&error, values()).is_some());
        let clean = json!({"tool_response": {"llmContent": "nothing here"}});
        assert_eq!(mask_tool_result(&clean, values()), None);
        assert_eq!(mask_tool_result(&json!({}), values()), None);
        assert_eq!(mask_tool_result(&event, Vec::new()), None);
    }
}
