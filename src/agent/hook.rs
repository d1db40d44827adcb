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
//!     `agent_fifo`), which reads the sensitive variables from the cache
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
use super::client::Functions;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The format name the cache key gets for the hook's entries (nothing
/// else renders it, so the keys never meet `env --cache`'s).
const ENTRY_FORMAT: &str = "agentenv-hook-sensitive-v1";

/// How long a cache entry must still be fresh when a command starts.
const ENTRY_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

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
    let tool = obj.get("tool_name").and_then(Value::as_str).unwrap_or("");
    let Some(input) = obj.get("tool_input").and_then(Value::as_object) else {
        return Ok(None);
    };
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
    let Some((entry, prologue)) = sensitive_entry(base, client)? else {
        // Nothing sensitive in this session: nothing to do.
        return Ok(None);
    };
    let me = self_program();
    let daemon = super::daemon::ensure(&me, client.name());
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
    let mut out = json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "updatedInput": Value::Object(updated),
        }
    });
    if facts.allow_with_update {
        // Codex applies updatedInput only with "allow", which there is
        // not an approval (that is the PermissionRequest hook's): the
        // command still goes through Codex's approval policy and sandbox.
        out["hookSpecificOutput"]["permissionDecision"] = json!("allow");
    }
    Ok(Some(out))
}

fn deny(_client: Client, reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    })
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

/// Write Codex's prologue file when it is missing or not this version's.
fn ensure_prologue(user_root: &Path) -> Result<PathBuf, String> {
    let path = prologue_path(user_root);
    let text = format!("{FUNCTIONS}__agentenv_begin \"$@\"\n");
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

/// The cache entry holding this session's sensitive variables (written
/// now when missing or about to expire); `None` when there are none. For
/// Codex, which has no session env file before 0.172, the entry also
/// holds the `export` lines of the public variables.
fn sensitive_entry(
    base: &crate::core::Env,
    client: Client,
) -> Result<Option<(PathBuf, PathBuf)>, String> {
    let req = crate::session::Request {
        require_trust: true,
        cache: crate::session::CacheMode::Entry {
            format: format!("{ENTRY_FORMAT} {}", client.name()),
            fresh_for: ENTRY_MARGIN,
        },
        ..crate::session::Request::new(crate::session::Options::default())
    };
    let mut plan = crate::session::plan(&req, base).map_err(|e| e.to_string())?;
    crate::log::notes(&plan.take_notes());
    if let Some(why) = plan.cache_error() {
        return Err(why.to_string());
    }
    if let (Some(bytes), Some(entry)) = (plan.cached(), plan.cache_entry()) {
        if bytes == b"{}" {
            return Ok(None);
        }
        return Ok(Some((entry, ensure_prologue(plan.user_store())?)));
    }
    let session = plan.assemble();
    crate::log::notes(session.assembly.notes());
    let values = session.values_to_mask();
    let public = if client.facts().public_in_entry {
        let mut view = session.view(true);
        session.keep_public(&mut view);
        crate::render::render(crate::render::Format::Export, &view)
    } else {
        String::new()
    };
    let text = entry_text(&values, &public);
    let kept = plan.keep(text.as_bytes())?;
    if text == "{}" {
        return Ok(None);
    }
    match kept {
        Some(entry) => Ok(Some((entry, ensure_prologue(plan.user_store())?))),
        None => Err(format!(
            "cannot write the cache entry in {}",
            plan.cache_entry()
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(Path::new(""))
                .display()
        )),
    }
}

fn hex(b: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(H[(x >> 4) as usize] as char);
        s.push(H[(x & 15) as usize] as char);
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// An entry: `{"vars": [[NAME, HEX-VALUE], …], "public": "export …"}`
/// (`{}` when both are empty): names and values byte-exact, UTF-8 as the
/// cache wants.
fn entry_text(values: &[(String, Vec<u8>)], public: &str) -> String {
    if values.is_empty() && public.trim().is_empty() {
        return "{}".into();
    }
    let vars: Vec<Value> = values.iter().map(|(k, v)| json!([k, hex(v)])).collect();
    json!({ "vars": vars, "public": public }).to_string()
}

/// Sensitive variables: names and values.
pub(crate) type Values = Vec<(String, Vec<u8>)>;

/// The sensitive variables and the public `export` lines of an entry.
type Entry = (Vec<(String, Vec<u8>)>, String);

fn parse_entry(bytes: &[u8]) -> Option<Entry> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let public = v
        .get("public")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(vars) = v.get("vars") else {
        return Some((Vec::new(), public));
    };
    let vars = vars
        .as_array()?
        .iter()
        .map(|p| {
            let name = p.get(0)?.as_str()?.to_string();
            let value = unhex(p.get(1)?.as_str()?)?;
            Some((name, value))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((vars, public))
}

/// A name the shell can assign.
fn shell_name(n: &str) -> bool {
    crate::compat::ident::is_name(n.as_bytes()) && !n.starts_with("__ae_")
}

/// The exports a rewritten command `eval`s (ended by NUL: sent once the
/// shell's output goes into the FIFOs) and the values to mask, from the
/// cache entry `entry`. `Err`: a value-free message.
pub(crate) fn load_entry(entry: &Path) -> Result<(Vec<u8>, Values), String> {
    if entry.parent().is_none() || entry.file_name().and_then(|k| k.to_str()).is_none() {
        return Err("hook run: the entry path has no file name".into());
    }
    let Some(bytes) = crate::session::read_entry(entry) else {
        return Err(format!(
            "the sensitive variables' cache entry {} is gone or stale",
            entry.display()
        ));
    };
    let Some((vars, public)) = parse_entry(&bytes) else {
        return Err(format!(
            "the cache entry {} is not agentenv's",
            entry.display()
        ));
    };
    let mut prologue: Vec<u8> = public.into_bytes();
    for (name, value) in &vars {
        if shell_name(name) {
            // A name zsh keeps for itself (read-only: the assignment would
            // end the `eval` there; `USERNAME`: zsh would change the
            // shell's user; `path`: `PATH`) is set in bash only.
            let zsh_own = crate::hook::shell_reserves(crate::hook::Shell::Zsh, name.as_bytes());
            if zsh_own {
                prologue.extend_from_slice(
                    format!(
                        "if [ -n \"${{ZSH_VERSION-}}\" ]; then printf '%s\\n' 'agentenv: zsh keeps \
                         {name} for itself: this command runs without it' >&2; else "
                    )
                    .as_bytes(),
                );
            }
            prologue.extend_from_slice(b"export ");
            prologue.extend_from_slice(name.as_bytes());
            prologue.push(b'=');
            prologue.extend_from_slice(&crate::compat::sh::single_quote(value));
            if zsh_own {
                prologue.extend_from_slice(b"; fi");
            }
            prologue.push(b'\n');
        }
    }
    prologue.push(0);
    Ok((prologue, vars))
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_shell_tries_every_slot_of_the_daemon() {
        let slots: Vec<String> = (0..crate::agent::daemon::SLOTS)
            .map(|i| i.to_string())
            .collect();
        let want = format!("for __ae_i in {}; do", slots.join(" "));
        assert!(FUNCTIONS.contains(&want), "{want}");
    }

    #[test]
    fn entries_round_trip_bytes() {
        let v = vec![
            ("A".to_string(), b"x\xff\n'y".to_vec()),
            ("B".to_string(), Vec::new()),
        ];
        assert_eq!(
            parse_entry(entry_text(&v, "export X=1\n").as_bytes()),
            Some((v, "export X=1\n".to_string()))
        );
        assert_eq!(parse_entry(b"{}"), Some((Vec::new(), String::new())));
        assert_eq!(parse_entry(b"not json"), None);
    }
}
