//! `agentenv init CLIENT` without the command line: which file it edits
//! ([`settings_path`]), the plan and its application ([`init`]: a client's
//! settings edited through [`super::wiring`], or a whole file of
//! agentenv's own), and what `status` and `explain` find wired
//! ([`wiring_found`]). The command line (`cli/agent.rs`) holds the
//! arguments and prints the [`Report`].
//!
//! The clients wired through a file of agentenv's own rather than an edit
//! of the client's settings (`init opencode`, `init copilot`;
//! docs/agents.md):
//!
//! * **OpenCode** loads every `*.js` in `~/.config/opencode/plugins/` (or
//!   `DIR/.opencode/plugins/`): `init opencode` writes `agentenv.js` there
//!   ([`OPENCODE_PLUGIN`], the file `opencode.js`). Its `shell.env` hook
//!   gives each shell call the session's public variables (`agentenv hook
//!   opencode shell-env`, read from a pipe: no value on a command line);
//!   its `tool.execute.before` hook asks `agentenv hook opencode
//!   pre-tool-use` (the event on stdin, as Claude Code's) and rewrites the
//!   shell command (sensitive variables and masking, as for Codex) or
//!   throws on a store path.
//! * **Copilot CLI** loads every `*.json` in `~/.copilot/hooks/` (or a
//!   repository's `.github/hooks/`): `init copilot` writes `agentenv.json`,
//!   one `preToolUse` hook answering with `modifiedArgs` or a deny.
//!
//! The file is agentenv's alone: re-running rewrites it only when it
//! differs; `--remove` deletes it (and nothing else); a file of that name
//! that agentenv did not write is refused, never overwritten.

use super::client::{Client, Setup};
use super::wiring::{add_wiring, remove_wiring, Outcome, Wiring};
use super::Error;
use crate::compat::sh::shlex_quote;
use crate::jsonedit;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Largest settings file read.
const MAX_SETTINGS: u64 = 16 << 20;

/// Largest file of agentenv's own read (and settings file `status` reads).
const MAX_OWN_FILE: u64 = 64 << 20;

/// `init`'s choices (the command line's flags).
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// `--project DIR`; `None`: the user's file.
    pub project: Option<PathBuf>,
    pub dry_run: bool,
    pub remove: bool,
    pub export_values: bool,
}

/// What `init` did: the resulting file for stdout (`--dry-run`), then the
/// lines to say (in order), then a warning.
#[derive(Debug, Default)]
pub(crate) struct Report {
    pub stdout: Option<String>,
    pub said: Vec<String>,
    pub warning: Option<&'static str>,
}

impl Report {
    fn said(line: String) -> Report {
        Report {
            said: vec![line],
            ..Report::default()
        }
    }
}

/// The file `init` edits: `DIR`'s for `--project DIR`, else the user's.
pub(crate) fn settings_path(
    client: Client,
    project: Option<&Path>,
    env: &crate::core::Env,
) -> Result<PathBuf, String> {
    let cwd = crate::fsutil::current_dir()?;
    let f = client.facts();
    if let Some(dir) = project {
        let dir = cwd.join(dir);
        if !dir.is_dir() {
            return Err(format!("--project {}: not a directory", dir.display()));
        }
        return Ok(dir.join(f.settings_dir).join(f.settings_file));
    }
    match client.user_dir(env, &cwd) {
        Some(d) => Ok(d.join(f.settings_file)),
        None => Err("HOME is not set; name the file's project with --project DIR".into()),
    }
}

/// The program the hooks name: the bare name in a project's file, else
/// agentenv's own path (`quote`d for a shell command).
fn program(o: &Options, env: &crate::core::Env, quote: bool, what: &str) -> String {
    if o.project.is_some() {
        return "agentenv".to_string();
    }
    match super::settings_file::own_program(env) {
        Some(p) if quote => shlex_quote(&p),
        Some(p) => p,
        None => {
            crate::warn!("agentenv's own path is not UTF-8; {what} by bare name");
            "agentenv".to_string()
        }
    }
}

/// The path `init` edits, checked to stay inside `--project DIR`.
fn checked_path(client: Client, o: &Options, env: &crate::core::Env) -> Result<PathBuf, Error> {
    let path = settings_path(client, o.project.as_deref(), env).map_err(Error::Runtime)?;
    if let Some(project) = &o.project {
        super::settings_file::check_inside_project(project, &path).map_err(|m| {
            Error::Runtime(format!("{}: {m}; the file was not changed", path.display()))
        })?;
    }
    Ok(path)
}

fn cannot(verb: &str, shown: &str, e: &std::io::Error) -> Error {
    Error::Runtime(format!(
        "{shown}: cannot {verb} it ({})",
        crate::fsutil::io_kind(e)
    ))
}

/// `init CLIENT [--user | --project DIR] [--dry-run] [--remove]
/// [--export-values]`: wire `client`, or take agentenv's wiring out.
pub(crate) fn init(client: Client, o: &Options) -> Result<Report, Error> {
    if o.export_values && client.facts().env_file_var.is_empty() {
        return Err(Error::Usage(format!(
            "init {}: --export-values is not needed: the client's hook rewrites each shell command",
            client.name()
        )));
    }
    if client.facts().setup == Setup::OwnFile {
        return init_own_file(client, o);
    }
    let env = crate::core::process_env();
    let path = checked_path(client, o, &env)?;
    let shown = path.display().to_string();
    let unchanged =
        |msg: String| Error::Runtime(format!("{shown}: {msg}; the file was not changed"));
    let (bytes, exists) = match crate::fsutil::read_input(&path, MAX_SETTINGS) {
        Ok(b) => (b, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), false),
        Err(e) => return Err(cannot("read", &shown, &e)),
    };
    // A UTF-8 byte order mark is kept.
    const BOM: &[u8] = b"\xef\xbb\xbf";
    let bom = bytes.starts_with(BOM);
    let body = bytes.strip_prefix(BOM).unwrap_or(&bytes);
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        Err(e) => {
            let (l, c) = jsonedit::line_col(body, e.valid_up_to());
            return Err(unchanged(format!(
                "not valid JSON: not UTF-8 at line {l}, column {c}"
            )));
        }
    };
    let program = program(o, &env, true, "the hooks name it");
    let wiring = Wiring::new(client, &program, o.export_values);
    let (mut out, outcome) = if o.remove {
        remove_wiring(text, &wiring)
    } else {
        add_wiring(text, &wiring)
    }
    .map_err(unchanged)?;
    if !exists && !out.ends_with('\n') {
        out.push('\n');
    }
    if bom {
        out.insert(0, '\u{feff}');
    }
    let stdout = o.dry_run.then(|| out.clone());
    let what = if client.facts().deny_rules.is_empty() {
        "agentenv's hooks"
    } else {
        "agentenv's hooks and deny rules"
    };
    let nothing = match outcome {
        Outcome::AlreadyPresent => Some(format!("{what} are already in {shown}; nothing changed")),
        Outcome::NotPresent => Some(format!("none of {what} in {shown}; nothing changed")),
        _ => None,
    };
    if let Some(line) = nothing {
        return Ok(Report {
            stdout,
            ..Report::said(line)
        });
    }
    if !o.dry_run {
        super::settings_file::write_settings(&path, out.as_bytes(), exists)
            .map_err(|e| cannot("write", &shown, &e))?;
    }
    let did = match outcome {
        Outcome::Added => "added",
        Outcome::Updated => "updated",
        _ => "removed",
    };
    let to = if outcome == Outcome::Removed {
        "from"
    } else {
        "in"
    };
    let mut r = Report {
        stdout,
        ..Report::said(format!("{}{did} {what} {to} {shown}", dry(o)))
    };
    if outcome == Outcome::Removed {
        return Ok(r);
    }
    if o.export_values {
        r.warning = Some(
            "--export-values: every value, sensitive ones too, goes into the agent's environment and command lines; each session start will say so",
        );
    } else if client.facts().session_start_event.is_empty() {
        r.said.push(
            "each shell command gets the session's variables (a project store loads once `agentenv allow` recorded it), its output masked; every tool result is masked before the model reads it".into(),
        );
    } else {
        r.said.push(
            "the session gets the public variables only (the start hook has --require-trust: a project store loads once `agentenv allow` recorded it); each shell command gets the sensitive ones, its output masked".into(),
        );
        if client == Client::Codex && !o.dry_run {
            r.said.push(
                "next, in Codex: run /hooks and trust agentenv's hooks (Codex runs a hook only once you trusted it; a headless run needs --dangerously-bypass-hook-trust)".into(),
            );
        }
    }
    Ok(r)
}

/// The prefix of a `--dry-run`'s lines.
fn dry(o: &Options) -> &'static str {
    if o.dry_run {
        "dry run: would have "
    } else {
        ""
    }
}

/// The marker on the first line of the plugin (how `init` knows it).
const PLUGIN_MARK: &str = "// agentenv: OpenCode plugin written by `agentenv init opencode`";

/// The OpenCode plugin; `@AGENTENV@` is agentenv's path as a JS string.
pub(crate) const OPENCODE_PLUGIN: &str = include_str!("opencode.js");

/// The file's text for `program` (unquoted).
pub(crate) fn file_text(client: Client, program: &str) -> String {
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
                    .and_then(super::wiring::first_word)
                    .is_some_and(|(prog, rest)| {
                        prog.rsplit('/').next() == Some("agentenv")
                            && rest.trim() == "hook copilot pre-tool-use"
                    })
        }
    }
}

/// `init opencode|copilot [--user | --project DIR] [--dry-run] [--remove]`.
fn init_own_file(client: Client, o: &Options) -> Result<Report, Error> {
    let env = crate::core::process_env();
    let path = checked_path(client, o, &env)?;
    let shown = path.display().to_string();
    let current = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(cannot("read", &shown, &e)),
        Ok(m) if !m.is_file() => {
            return Err(Error::Runtime(format!(
                "{shown}: not a regular file (a link, a directory or a device); not changed"
            )))
        }
        Ok(_) => {
            let bytes = crate::fsutil::read_input(&path, MAX_OWN_FILE)
                .map_err(|e| cannot("read", &shown, &e))?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if !is_ours(client, &text) {
                return Err(Error::Runtime(format!(
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
    let dry = dry(o);
    if o.remove {
        if current.is_none() {
            return Ok(Report::said(format!(
                "no {what} at {shown}; nothing changed"
            )));
        }
        if !o.dry_run {
            std::fs::remove_file(&path).map_err(|e| cannot("remove", &shown, &e))?;
        }
        return Ok(Report::said(format!("{dry}removed {what}: {shown}")));
    }
    let program = program(o, &env, false, "the hook names it");
    let text = file_text(client, &program);
    let stdout = o.dry_run.then(|| text.clone());
    if current.as_deref() == Some(text.as_str()) {
        return Ok(Report {
            stdout,
            ..Report::said(format!("{what} is already at {shown}; nothing changed"))
        });
    }
    if !o.dry_run {
        super::settings_file::write_settings(&path, text.as_bytes(), current.is_some())
            .map_err(|e| cannot("write", &shown, &e))?;
    }
    let did = if current.is_some() {
        "updated"
    } else {
        "wrote"
    };
    let mut r = Report {
        stdout,
        ..Report::said(format!("{dry}{did} {what}: {shown}"))
    };
    r.said.push(
        "each shell command gets the session's variables (a project store loads once `agentenv allow` recorded it), its output masked; the file tools cannot open a store".into(),
    );
    Ok(r)
}

/// One client's wiring found by `status` and `explain`: the client, the
/// scope (`user`, `project`), the file, and the events (the client's own
/// names of the hooks found; for a file of agentenv's own, its event).
/// Serialised as `{client, scope, file, events}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Found {
    pub client: &'static str,
    pub scope: &'static str,
    pub file: String,
    pub events: Vec<&'static str>,
}

/// agentenv's wiring of each client found in the user's settings and in
/// `project`'s.
pub(crate) fn wiring_found(project: Option<&Path>) -> Vec<Found> {
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
            let Ok(bytes) = crate::fsutil::read_input(&path, MAX_OWN_FILE) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let events: Vec<&str> = match f.setup {
                Setup::Settings => super::wiring::found_events(&text, client),
                Setup::OwnFile if is_ours(client, &text) => vec![f.pre_tool_use_event],
                Setup::OwnFile => Vec::new(),
            };
            if !events.is_empty() {
                out.push(Found {
                    client: client.name(),
                    scope,
                    file: path.display().to_string(),
                    events,
                });
            }
        }
    }
    out
}

/// `explain`'s trailing line naming [`wiring_found`]'s finds:
/// `agent wiring: claude (user: FILE), gemini (project: FILE)`; `None`
/// when none was found. Paths with control characters escaped.
pub(crate) fn wiring_line(found: &[Found]) -> Option<String> {
    let esc = |s: &str| crate::log::escape_controls(s, false).into_owned();
    let items: Vec<String> = found
        .iter()
        .map(|x| format!("{} ({}: {})", esc(x.client), esc(x.scope), esc(&x.file)))
        .collect();
    (!items.is_empty()).then(|| format!("agent wiring: {}\n", items.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_init_wrote_is_known_as_ours_and_another_is_not() {
        for client in [Client::OpenCode, Client::Copilot] {
            for program in [
                "agentenv",
                "/usr/local/bin/agentenv",
                "/opt/my tools/agentenv",
            ] {
                assert!(is_ours(client, &file_text(client, program)), "{program}");
            }
        }
        assert!(!is_ours(Client::OpenCode, "export const P = 1;\n"));
        let other =
            file_text(Client::Copilot, "/usr/bin/agentenv").replace("copilot pre", "claude pre");
        assert!(!is_ours(Client::Copilot, &other));
        let not_ours = file_text(Client::Copilot, "/usr/bin/other-tool");
        assert!(!is_ours(Client::Copilot, &not_ours));
        let two = r#"{"hooks": {"preToolUse": [{"bash": "agentenv hook copilot pre-tool-use"}], "postToolUse": []}}"#;
        assert!(!is_ours(Client::Copilot, two));
        assert!(!is_ours(Client::Copilot, "not json"));
    }

    #[test]
    fn the_plugin_names_agentenv_as_a_js_string() {
        let text = file_text(Client::OpenCode, "/a \"b\"/agentenv");
        assert!(text.contains(r#"const AGENTENV = "/a \"b\"/agentenv";"#));
        assert!(!text.contains("@AGENTENV@"));
    }

    #[test]
    fn the_wiring_found_serialises_and_reads_as_one_line() {
        assert_eq!(wiring_line(&[]), None);
        let found = vec![
            Found {
                client: "claude",
                scope: "user",
                file: "/h/.claude/settings.json".into(),
                events: vec!["SessionStart", "PreToolUse"],
            },
            Found {
                client: "gemini",
                scope: "project",
                file: "/p/x\ny/.gemini/settings.json".into(),
                events: vec!["BeforeTool"],
            },
        ];
        assert_eq!(
            serde_json::to_string(&found[0]).unwrap(),
            r#"{"client":"claude","scope":"user","file":"/h/.claude/settings.json","events":["SessionStart","PreToolUse"]}"#
        );
        assert_eq!(
            wiring_line(&found).unwrap(),
            "agent wiring: claude (user: /h/.claude/settings.json), gemini (project: /p/x\\x0ay/.gemini/settings.json)\n"
        );
    }
}
