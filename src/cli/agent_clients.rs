//! The clients wired through a file of agentenv's own rather than an edit
//! of the client's settings (`init opencode`, `init copilot`), and the hook
//! events only one client has (Gemini CLI's `after-tool`, OpenCode's
//! `shell-env`). docs/agents.md.
//!
//! * **OpenCode** loads every `*.js` in `~/.config/opencode/plugins/` (or
//!   `DIR/.opencode/plugins/`): `init opencode` writes `agentenv.js` there
//!   ([`OPENCODE_PLUGIN`]). Its `shell.env` hook gives each shell call the
//!   session's public variables (`agentenv hook opencode shell-env`, read
//!   from a pipe: no value on a command line); its `tool.execute.before`
//!   hook asks `agentenv hook opencode pre-tool-use` (the event on stdin,
//!   as Claude Code's) and rewrites the shell command (sensitive variables
//!   and masking, as for Codex) or throws on a store path.
//! * **Copilot CLI** loads every `*.json` in `~/.copilot/hooks/` (or a
//!   repository's `.github/hooks/`): `init copilot` writes `agentenv.json`,
//!   one `preToolUse` hook answering with `modifiedArgs` or a deny.
//!
//! The file is agentenv's alone: re-running rewrites it only when it
//! differs; `--remove` deletes it (and nothing else); a file of that name
//! that agentenv did not write is refused, never overwritten.
//!
//! * `hook gemini after-tool` reads Gemini CLI's AfterTool event; when the
//!   tool's result (`tool_response.llmContent`) holds a form of a sensitive
//!   value, it answers `decision: deny` with the masked result as the
//!   `reason`, which Gemini CLI sends the model instead of the result
//!   ("Tool result blocked: …"); otherwise nothing.

use super::agent::{ClaudeArgs, Client};
use super::{say, Exit, Failure};
use crate::compat::sh::shlex_quote;
use serde_json::{json, Value};
use std::io::Read;

/// The largest event read.
const MAX_EVENT: u64 = 64 << 20;

/// The marker on the first line of the plugin (how `init` knows it).
const PLUGIN_MARK: &str = "// agentenv: OpenCode plugin written by `agentenv init opencode`";

/// The OpenCode plugin; `@AGENTENV@` is agentenv's path as a JS string.
pub const OPENCODE_PLUGIN: &str = r#"// agentenv: OpenCode plugin written by `agentenv init opencode`
// (`agentenv init opencode --remove` takes it out; edits are overwritten).
// shell.env: each shell call gets the session's public variables, from a
// pipe (no value on a command line). tool.execute.before: a shell command
// is rewritten to run with the sensitive variables and masked output; a
// file tool aimed at a store is refused. docs/agents.md in agentenv.
import { spawnSync } from "node:child_process";

const AGENTENV = @AGENTENV@;

function ask(args, input, cwd) {
  const r = spawnSync(AGENTENV, ["hook", "opencode", ...args], {
    input, cwd, encoding: "utf8", maxBuffer: 64 << 20,
  });
  if (r.stderr) process.stderr.write(r.stderr);
  if (r.error || r.status !== 0 || !r.stdout.trim()) return null;
  try { return JSON.parse(r.stdout); } catch { return null; }
}

export const AgentenvPlugin = async ({ directory }) => ({
  "shell.env": async (input, output) => {
    const env = ask(["shell-env"], "", input.cwd || directory);
    if (env && typeof env === "object") {
      for (const [k, v] of Object.entries(env)) if (typeof v === "string") output.env[k] = v;
    }
  },
  "tool.execute.before": async (input, output) => {
    const event = JSON.stringify({ tool_name: input.tool, tool_input: output.args, cwd: directory });
    const a = ask(["pre-tool-use"], event, directory);
    if (!a) return;
    if (typeof a.deny === "string") throw new Error(a.deny);
    if (a.args && typeof a.args === "object") Object.assign(output.args, a.args);
  },
});
"#;

/// The file's text for `program` (unquoted).
fn file_text(client: Client, program: &str) -> String {
    match client {
        Client::OpenCode => OPENCODE_PLUGIN.replace(
            "@AGENTENV@",
            &serde_json::to_string(program).expect("a string serializes"),
        ),
        _ => {
            let v = json!({
                "version": 1,
                "hooks": {
                    "preToolUse": [{
                        "type": "command",
                        "bash": format!("{} hook copilot pre-tool-use", shlex_quote(program)),
                        "timeoutSec": 30
                    }]
                }
            });
            serde_json::to_string_pretty(&v).expect("a value serializes") + "\n"
        }
    }
}

/// Whether `text` is a file `init` wrote (any version, any program).
pub(crate) fn is_ours(client: Client, text: &str) -> bool {
    match client {
        Client::OpenCode => text.starts_with(PLUGIN_MARK),
        _ => {
            let Ok(v) = serde_json::from_str::<Value>(text) else {
                return false;
            };
            let Some(hooks) = v.get("hooks").and_then(Value::as_object) else {
                return false;
            };
            let Some([hook]) = hooks
                .get("preToolUse")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
            else {
                return false;
            };
            hooks.len() == 1
                && hook
                    .get("bash")
                    .and_then(Value::as_str)
                    .and_then(crate::agent::wiring::first_word)
                    .is_some_and(|(prog, rest)| {
                        prog.rsplit('/').next() == Some("agentenv")
                            && rest.trim() == "hook copilot pre-tool-use"
                    })
        }
    }
}

/// `init opencode|copilot [--user | --project DIR] [--dry-run] [--remove]`.
pub(crate) fn run_init(client: Client, a: ClaudeArgs) -> Exit {
    if a.export_values {
        return Err(Failure::usage(format!(
            "init {}: --export-values is not needed: the client's hook rewrites each shell command",
            client.name()
        )));
    }
    let env = crate::core::process_env();
    let path = super::agent::settings_path(client, &a, &env).map_err(Failure::runtime)?;
    let shown = path.display().to_string();
    if let Some(project) = &a.project {
        super::agent::check_inside_project(project, &path)
            .map_err(|m| Failure::runtime(format!("{shown}: {m}; the file was not changed")))?;
    }
    let current = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Failure::runtime(format!(
                "{shown}: cannot read it ({})",
                crate::fsutil::io_kind(&e)
            )))
        }
        Ok(m) if !m.is_file() => {
            return Err(Failure::runtime(format!(
                "{shown}: not a regular file (a link, a directory or a device); not changed"
            )))
        }
        Ok(_) => {
            let bytes = crate::fsutil::read_input(&path, MAX_EVENT).map_err(|e| {
                Failure::runtime(format!(
                    "{shown}: cannot read it ({})",
                    crate::fsutil::io_kind(&e)
                ))
            })?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if !is_ours(client, &text) {
                return Err(Failure::runtime(format!(
                    "{shown}: this file is not agentenv's; not changed (move it away, or name it otherwise)"
                )));
            }
            Some(text)
        }
    };
    let what = match client {
        Client::OpenCode => "agentenv's OpenCode plugin",
        _ => "agentenv's Copilot hook",
    };
    let dry = if a.dry_run {
        "dry run: would have "
    } else {
        ""
    };
    if a.remove {
        if current.is_none() {
            say(format_args!("no {what} at {shown}; nothing changed"));
            return Ok(0);
        }
        if !a.dry_run {
            std::fs::remove_file(&path).map_err(|e| {
                Failure::runtime(format!(
                    "{shown}: cannot remove it ({})",
                    crate::fsutil::io_kind(&e)
                ))
            })?;
        }
        say(format_args!("{dry}removed {what}: {shown}"));
        return Ok(0);
    }
    let program = if a.project.is_some() {
        "agentenv".to_string()
    } else {
        match super::agent::own_program(&env) {
            Some(p) => p,
            None => {
                crate::warn!("agentenv's own path is not UTF-8; the hook names it by bare name");
                "agentenv".to_string()
            }
        }
    };
    let text = file_text(client, &program);
    if a.dry_run {
        super::write_stdout(text.as_bytes())?;
    }
    if current.as_deref() == Some(text.as_str()) {
        say(format_args!(
            "{what} is already at {shown}; nothing changed"
        ));
        return Ok(0);
    }
    if !a.dry_run {
        super::agent::write_settings(&path, text.as_bytes(), current.is_some()).map_err(|e| {
            Failure::runtime(format!(
                "{shown}: cannot write it ({})",
                crate::fsutil::io_kind(&e)
            ))
        })?;
    }
    let did = if current.is_some() {
        "updated"
    } else {
        "wrote"
    };
    say(format_args!("{dry}{did} {what}: {shown}"));
    say(format_args!(
        "each shell command gets the session's variables (a project store loads once `agentenv allow` recorded it), its output masked; the file tools cannot open a store"
    ));
    Ok(0)
}

fn read_event(what: &str) -> Result<Value, String> {
    let mut raw = Vec::new();
    std::io::stdin()
        .take(MAX_EVENT + 1)
        .read_to_end(&mut raw)
        .map_err(|e| {
            format!(
                "{what}: cannot read the event on stdin ({})",
                crate::fsutil::io_kind(&e)
            )
        })?;
    if raw.len() as u64 > MAX_EVENT {
        return Err(format!("{what}: the event on stdin is too large"));
    }
    serde_json::from_slice(&raw).map_err(|e| {
        format!(
            "{what}: the event on stdin is not valid JSON (line {}, column {})",
            e.line(),
            e.column()
        )
    })
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
pub fn mask_tool_result(event: &Value, values: crate::agent::entry::Values) -> Option<Value> {
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

/// `hook gemini after-tool`.
pub fn after_tool(client: Client) -> Exit {
    let soft = |msg: String| {
        crate::error!("{msg}; the result is not masked by agentenv");
        Ok(1)
    };
    let event = match read_event("hook gemini after-tool") {
        Ok(v) => v,
        Err(m) => return soft(m),
    };
    let base = crate::core::process_env();
    let entry = match crate::agent::entry::make(&base, client) {
        Ok(Some((entry, _))) => entry,
        Ok(None) => return Ok(0),
        Err(m) => return soft(format!("hook gemini after-tool: {m}")),
    };
    let values = match crate::agent::entry::load_entry(&entry) {
        Ok((_, v)) => v,
        Err(m) => return soft(format!("hook gemini after-tool: {m}")),
    };
    match mask_tool_result(&event, values) {
        None => Ok(0),
        Some(v) => {
            let mut s = v.to_string();
            s.push('\n');
            super::print(s.as_bytes())
        }
    }
}

/// `hook opencode shell-env`: the session's public variables as a JSON
/// object (`env --public-only --require-trust --diff --cache --format
/// json`), for the plugin's `shell.env`.
pub fn shell_env() -> Exit {
    super::session::run_env(super::agent::hook_env_args("json", None, true))
}

/// `status`: agentenv's wiring of each client found in the user's
/// settings and in `project`'s: `{client, file, scope, events}` (events:
/// the client's own names of the hooks found; for a file of agentenv's
/// own, its event).
pub(crate) fn wiring_found(project: Option<&std::path::Path>) -> Vec<Value> {
    use crate::agent::client::Setup;
    let env = crate::core::process_env();
    let cwd = crate::fsutil::current_dir().unwrap_or_default();
    let mut out = Vec::new();
    for &client in Client::ALL {
        let f = client.facts();
        let mut places = Vec::new();
        if let Some(d) = client.user_dir(&env, &cwd) {
            places.push(("user", d.join(f.settings_file)));
        }
        if let Some(p) = project {
            places.push(("project", p.join(f.settings_dir).join(f.settings_file)));
        }
        for (scope, path) in places {
            let Ok(bytes) = crate::fsutil::read_input(&path, MAX_EVENT) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let events: Vec<&str> = match f.setup {
                Setup::Settings => crate::agent::wiring::found_events(&text, client),
                Setup::OwnFile if is_ours(client, &text) => vec![f.pre_tool_use_event],
                Setup::OwnFile => Vec::new(),
            };
            if !events.is_empty() {
                out.push(json!({
                    "client": client.name(), "scope": scope,
                    "file": path.display().to_string(), "events": events,
                }));
            }
        }
    }
    out
}
