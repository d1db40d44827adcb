//! `agentenv hook claude|codex EVENT`: the hooks `init claude` and `init
//! codex` install (docs/claude-code.md#claude-code-the-session-holds-no-secret-values).
//! The agent's session holds no sensitive value: its shell gets them for one
//! command at a time, with that command's output masked.
//!
//! * `pre-tool-use` reads the client's hook event (JSON) on stdin.
//!   - A shell command (`Bash`) is rewritten through the documented
//!     `hookSpecificOutput.updatedInput` to run **in the agent's own shell**
//!     (so a `cd`, the exit status and everything else the client tracks
//!     stay as without agentenv) after one call, on lines of its own:
//!     ```text
//!     __agentenv_begin AGENTENV claude ENTRY
//!     ORIGINAL
//!     ```
//!     `__agentenv_begin` ([`FUNCTIONS`], in the session env file) starts
//!     `agentenv hook claude wrap --entry ENTRY` (one process per command,
//!     [`super::relay`]), which reads the sensitive variables from the cache
//!     entry this hook wrote and sends the shell, over a pipe (never a
//!     command line), their `export`s once the shell's stdout and stderr
//!     go into two FIFOs it masks (`crate::mask`) onto the command's real
//!     stdout and stderr; an EXIT trap (`__agentenv_end`) hands the output
//!     back. In bash and zsh (in zsh the trap is set under `posix_traps`,
//!     so it is the shell's, not the function's); in any other shell the
//!     command runs without the values.
//!   - A file tool (Read, Edit, Write, Grep, Glob, …) aimed at a store
//!     (`~/.agents`, any `.agents` directory, the cache) is denied with a
//!     reason the agent reads: the file holds secrets; use the variable by
//!     name (`agentenv explain` lists the names).
//!   - Invalid input: a message on stderr, exit 1 (a non-blocking hook
//!     error): the client runs the original command unchanged — never a
//!     broken one.
//! * `wrap --entry ENTRY` is the per-command helper above (internal;
//!   `run`, its name before, answers that the session's functions are an
//!   older agentenv's).
//!
//! What is sensitive is the session's decision (`Session::
//! sensitive_values`); the values come from an owner-only cache entry
//! (the session's cache, `session::plan`'s `CacheMode::Entry`) keyed like `env --cache` by the stores and the
//! client's environment, so a command on a cache hit runs no layer.

pub use super::client::Client;
use super::client::{Answer, Functions};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The reason a denied file tool gives the agent.
pub const DENY_REASON: &str = "agentenv: this path is an agent store (or its cache): it holds secret values. Do not read it; use the variable by name in a shell command (e.g. \"$GH_TOKEN\"); `agentenv explain` lists the names.";

/// The answer to one PreToolUse event (`None`: nothing to say, the tool
/// runs as asked). `Err`: a message for a soft error.
pub fn decide(
    client: Client,
    event: &Value,
    base: &crate::core::Env,
) -> Result<Option<Value>, String> {
    let Some(obj) = event.as_object() else {
        return Err("the event is not a JSON object".into());
    };
    let (tool, input) = tool_of(obj);
    let tool = tool.as_str();
    let Some(input) = input else {
        return Ok(None);
    };
    let input = &input;
    let cwd = obj
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let facts = client.facts();
    if let Some(guarded) = super::guard::guards(client, tool, input) {
        let guard = super::guard::Guard::new(base);
        if guarded.iter().any(|p| guard.covers(&cwd, p)) {
            return Ok(Some(deny(client, DENY_REASON)));
        }
        if guarded.iter().any(|p| super::guard::proc_secret(&cwd, p)) {
            return Ok(Some(deny(client, super::guard::PROC_DENY_REASON)));
        }
        return Ok(None);
    }
    if !facts.shell_tools.contains(&tool) {
        return Ok(None);
    }
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Ok(None);
    };
    let Some(super::entry::Made {
        entry,
        user_store,
        references,
    }) = super::entry::make(base, client)?
    else {
        // Nothing sensitive in this session: nothing to do.
        return Ok(None);
    };
    let prologue = ensure_prologue(&user_store)?;
    let me = self_program();
    let daemon = super::daemon::ensure(&me, client.name(), references);
    let mut updated: Map<String, Value> = input.clone();
    updated.insert(
        "command".into(),
        Value::String(rewrite(
            command,
            &me,
            (facts.functions == Functions::Prologue).then_some(prologue.as_path()),
            &entry,
            client,
            daemon.as_deref(),
        )),
    );
    let updated = Value::Object(updated);
    let out = match facts.answer {
        Answer::PreToolUse => {
            let mut out = json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "updatedInput": updated,
                }
            });
            if facts.allow_with_update {
                // Codex applies updatedInput only with "allow", which there is
                // not an approval (that is the PermissionRequest hook's): the
                // command still goes through Codex's approval policy and sandbox.
                out["hookSpecificOutput"]["permissionDecision"] = json!("allow");
            }
            out
        }
        Answer::BeforeTool => json!({
            "hookSpecificOutput": { "hookEventName": "BeforeTool", "tool_input": updated }
        }),
        Answer::Plugin => json!({ "args": updated }),
        Answer::ModifiedArgs => json!({ "modifiedArgs": updated }),
    };
    Ok(Some(out))
}

/// The tool's name and input in a client's event: `tool_name` /
/// `tool_input` (Claude Code, Codex, Gemini CLI, agentenv's OpenCode
/// plugin, Copilot's PascalCase events), or Copilot's camelCase
/// `toolName` / `toolArgs` (an object, or the JSON text of one).
fn tool_of(obj: &Map<String, Value>) -> (String, Option<Map<String, Value>>) {
    let tool = obj
        .get("tool_name")
        .or_else(|| obj.get("toolName"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let input = match obj.get("tool_input").or_else(|| obj.get("toolArgs")) {
        Some(Value::Object(m)) => Some(m.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        },
        _ => None,
    };
    (tool, input)
}

fn deny(client: Client, reason: &str) -> Value {
    match client.facts().answer {
        Answer::PreToolUse => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        // The reason reaches the agent as the tool's error.
        Answer::BeforeTool => json!({ "decision": "deny", "reason": reason }),
        Answer::Plugin => json!({ "deny": reason }),
        Answer::ModifiedArgs => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }),
    }
}

/// This binary's path, for the rewrite (the `PATH` the agent's shell has
/// may not hold agentenv).
fn self_program() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.into_os_string().into_string().ok())
        .unwrap_or_else(|| "agentenv".to_string())
}

/// The shell functions of a rewritten command (no value in them):
/// `__agentenv_begin PROGRAM CLIENT ENTRY` starts the helper, redirects
/// the shell's output into its FIFOs, reads the exports and sets an EXIT
/// trap; `__agentenv_end` (the trap) hands the output back and waits until
/// the helper has written all of it (zsh: the trap set under
/// `posix_traps`, else it would fire when begin returns; `$$` for the
/// shell's pid, the helper's way in a subshell). When anything fails, or
/// the shell is neither bash nor zsh, begin says so and the command runs
/// plainly, without the sensitive variables. The text parses in dash too
/// (the helper's process substitution is inside an `eval`). Claude
/// Code gets them through `$CLAUDE_ENV_FILE` (the session-start hook),
/// Codex by sourcing [`prologue_path`].
pub const FUNCTIONS: &str = include_str!("functions.sh");

/// Codex's prologue file: `<user store>/.cache/agent-hook.bash`.
pub fn prologue_path(user_root: &Path) -> PathBuf {
    user_root.join(".cache").join("agent-hook.bash")
}

/// The text of Codex's prologue file: the functions, then the call.
pub fn prologue_text() -> String {
    format!("{FUNCTIONS}__agentenv_begin \"$@\"\n")
}

/// Write Codex's prologue file when it is missing or not this version's.
fn ensure_prologue(user_root: &Path) -> Result<PathBuf, String> {
    let path = prologue_path(user_root);
    let text = prologue_text();
    if std::fs::read(&path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(path);
    }
    let dir = path.parent().expect("a parent");
    crate::session::make_cache_dir(dir)
        .and_then(|()| {
            crate::fsutil::write_atomic(
                &path,
                text.as_bytes(),
                crate::fsutil::Mode::Exactly(0o600),
                false,
            )
        })
        .map_err(|e| {
            format!(
                "cannot write {} ({})",
                path.display(),
                crate::fsutil::io_kind(&e)
            )
        })?;
    Ok(path)
}

/// `FILE` with its functions block replaced by [`FUNCTIONS`] (or added).
pub fn with_functions(file: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in file.split_inclusive('\n') {
        if line.starts_with(": agentenv-hook-begin") {
            skipping = true;
            continue;
        }
        if skipping {
            if line.starts_with(": agentenv-hook-end") {
                skipping = false;
            }
            continue;
        }
        out.push_str(line);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(FUNCTIONS);
    out
}

/// A word for the rewrite: bare when plain, else single-quoted.
fn word(s: &str) -> String {
    crate::compat::sh::shlex_quote(s)
}

/// The command that runs `original` in the agent's shell with the
/// sensitive variables of `entry` and its output masked (module doc). The
/// original text stays as it is, on lines of its own after one call
/// (Claude Code: `__agentenv_begin …`, which a permission rule
/// `Bash(__agentenv_begin:*)` allows; Codex: `. FILE …`), so the client's
/// permission rules see the command's own words, and its status is the
/// last one, as without agentenv.
pub fn rewrite(
    original: &str,
    program: &str,
    prologue: Option<&Path>,
    entry: &Path,
    client: Client,
    daemon: Option<&str>,
) -> String {
    let call = match prologue {
        Some(p) => format!(". {}", word(&p.to_string_lossy())),
        None => "__agentenv_begin".to_string(),
    };
    let daemon = daemon.map(|d| format!(" {}", word(d))).unwrap_or_default();
    format!(
        "{call} {} {} {}{daemon}\n{original}",
        word(program),
        client.name(),
        word(&entry.to_string_lossy()),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting_survives_every_text() {
        for s in [
            "",
            "a'b",
            "'",
            "''",
            "$(x) `y` \"z\" \\",
            "a\nb\n",
            "é\u{1}\u{7f}",
        ] {
            let q = crate::compat::sh::shlex_quote(s);
            let out = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {q}")])
                .output()
                .unwrap();
            assert_eq!(out.stdout, s.as_bytes(), "{s:?}");
        }
    }
}
