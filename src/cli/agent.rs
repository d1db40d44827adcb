//! `agentenv hook claude|codex EVENT` and `agentenv init claude|codex`:
//! the arguments, stdin/stdout and exit statuses of the agent wiring; the
//! work is `crate::agent`'s.

use super::{say, Exit, Failure};
use crate::agent::entry::load_entry;
pub(crate) use crate::agent::hook::Client;
use crate::agent::hook::{decide, with_functions};
use crate::agent::wiring::{add_wiring, remove_wiring, Outcome, Wiring};
use crate::compat::sh::shlex_quote;
use crate::jsonedit;
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest hook event read (a 1 MiB command is well inside).
const MAX_EVENT: u64 = 64 << 20;

/// `agentenv hook CLIENT EVENT [ARGS…]`.
pub fn run(client: Client, event: &str, export_values: bool, entry: Option<&Path>) -> Exit {
    let known = client.events();
    match event {
        "pre-tool-use" => pre_tool_use(client),
        "session-start" if known.contains(&event) => session_start(client, export_values),
        "after-tool" if known.contains(&event) => after_tool(client),
        "shell-env" if known.contains(&event) => shell_env(),
        "daemon" => Ok(crate::agent::daemon::serve()),
        "wrap" => match entry {
            Some(entry) => run_command_helper(entry),
            None => Err(Failure::usage("hook CLIENT wrap needs --entry FILE")),
        },
        // The helper's name before the one-thread handshake: the shell
        // functions in this session's env file are an older agentenv's.
        "run" if entry.is_some() => Err(Failure::runtime(
            "this session's shell functions are from an older agentenv: start a new session \
             to load them again",
        )),
        other => Err(Failure::usage(format!(
            "unknown hook event '{}' for {} (known: {})",
            other.escape_debug(),
            client.name(),
            known.join(", ")
        ))),
    }
}

/// `hook CLIENT wrap --entry FILE` exactly as `__agentenv_begin` writes it,
/// parsed without clap: the helper is a process per shell command, and
/// building clap's tree of every command touches a good part of the
/// binary's pages. `None`: anything else, for clap.
pub fn wrap_fast_path(args: impl Iterator<Item = std::ffi::OsString>) -> Option<Exit> {
    let args: Vec<std::ffi::OsString> = args.take(7).collect();
    match args.as_slice() {
        [_, hook, client, wrap, flag, entry]
            if hook == "hook" && wrap == "wrap" && flag == "--entry" && !entry.is_empty() =>
        {
            let client = Client::parse(client.to_str()?)?;
            Some(run(client, "wrap", false, Some(Path::new(entry))))
        }
        _ => None,
    }
}

/// What the user sees at each session start under `--export-values`
/// (the client shows a hook's `systemMessage` to the user).
pub const EXPORT_VALUES_WARNING: &str = "agentenv: this session's environment holds the values of the sensitive variables (init --export-values): the agent can print them into its context. Run `agentenv init claude` (or codex) without --export-values to keep them out.";

/// `hook CLIENT session-start [--export-values]`: the session env into
/// `$CLAUDE_ENV_FILE` / `$CODEX_ENV_FILE` — the public variables only
/// (`env --public-only --require-trust --diff --cache --into`), or every
/// value with `--export-values`, which then warns the user (stderr and the
/// hook's `systemMessage`, never the model's context) — and [`FUNCTIONS`],
/// which the rewritten commands call.
fn session_start(client: Client, export_values: bool) -> Exit {
    let var = client.facts().env_file_var;
    let base = crate::core::process_env();
    let Some(file) = crate::core::get(&base, var).filter(|v| !v.is_empty()) else {
        // Codex before 0.172 has no session env file: its PreToolUse hook
        // brings the public variables too.
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
        return Ok(0);
    };
    let status = super::session::run_env(hook_env_args(
        "export",
        Some(PathBuf::from(file)),
        !export_values,
    ))?;
    // The functions the rewritten commands call (no value in them).
    let path = Path::new(file);
    let current = std::fs::read_to_string(path).unwrap_or_default();
    super::write_file(
        path,
        with_functions(&current).as_bytes(),
        crate::fsutil::Mode::Private,
        false,
        |path, kind| format!("${var} {path}: cannot write it ({kind})"),
    )?;
    // What the user must see reaches them as the hook's `systemMessage`
    // (the client shows it; a SessionStart hook's stderr it does not).
    let mut messages = Vec::new();
    if let Some(w) = project_refused(&base) {
        messages.push(format!(
            "agentenv: {w}; until then this session has the other stores' variables only"
        ));
    }
    if export_values {
        crate::warn!("{}", EXPORT_VALUES_WARNING.trim_start_matches("agentenv: "));
        messages.push(EXPORT_VALUES_WARNING.to_string());
    }
    if !messages.is_empty() {
        let msg = json!({ "systemMessage": messages.join("\n") }).to_string() + "\n";
        super::write_stdout(msg.as_bytes())?;
    }
    Ok(status)
}

/// What a hook's `env` renders: the session with the trust gate, only
/// what differs from the client's environment, from the cache.
pub(crate) fn hook_env_args(
    format: &str,
    into: Option<PathBuf>,
    public_only: bool,
) -> super::session::EnvArgs {
    super::session::EnvArgs {
        scope: super::session::ScopeArgs {
            global: false,
            agents_dir: None,
            timeout: None,
            require_trust: true,
        },
        format: format.into(),
        diff: true,
        cache: true,
        into,
        append: None,
        public_only,
        strict: false,
    }
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

/// A non-blocking hook error: the message on stderr, exit 1. The client
/// then runs the tool with its original input.
fn soft_error(msg: impl std::fmt::Display) -> Exit {
    crate::error!("{msg}; the tool runs unchanged (without the session's sensitive variables)");
    Ok(1)
}

fn pre_tool_use(client: Client) -> Exit {
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(MAX_EVENT + 1).read_to_end(&mut raw) {
        return soft_error(format!(
            "hook {} pre-tool-use: cannot read the event on stdin ({})",
            client.name(),
            crate::fsutil::io_kind(&e)
        ));
    }
    if raw.len() as u64 > MAX_EVENT {
        return soft_error(format!(
            "hook {} pre-tool-use: the event on stdin is larger than {} MiB",
            client.name(),
            MAX_EVENT >> 20
        ));
    }
    let event: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            return soft_error(format!(
                "hook {} pre-tool-use: the event on stdin is not valid JSON (line {}, column {})",
                client.name(),
                e.line(),
                e.column()
            ))
        }
    };
    let base = crate::core::process_env();
    let answer = match decide(client, &event, &base) {
        Ok(a) => a,
        Err(msg) => return soft_error(format!("hook {} pre-tool-use: {msg}", client.name())),
    };
    match answer {
        None => Ok(0),
        Some(v) => {
            let mut s = serde_json::to_string(&v).expect("a Value serializes");
            s.push('\n');
            super::print(s.as_bytes())
        }
    }
}

/// `hook CLIENT wrap --entry ENTRY`: fd 0 is the pipe the shell reads the
/// FIFOs' directory, the exports (ended by NUL) and then a line when the
/// command's output is out from (`agent_fifo`); fds 1 and 2 are the
/// command's real stdout and stderr.
fn run_command_helper(entry: &Path) -> Exit {
    use std::os::fd::AsFd;
    let sync = match rustix::io::dup(std::io::stdin().as_fd()) {
        Ok(fd) => std::fs::File::from(fd),
        Err(_) => {
            return Err(Failure::usage(
                "hook run: stdin is not open (internal command)",
            ))
        }
    };
    let (prologue, vars) = load_entry(entry).map_err(Failure::runtime)?;
    let fifos = crate::agent::relay::Fifos::create().map_err(|e| {
        Failure::runtime(format!(
            "cannot create the masking FIFOs ({})",
            crate::fsutil::io_kind(&e)
        ))
    })?;
    crate::agent::relay::serve(fifos, sync, &prologue, vars)
        .map(|()| 0)
        .map_err(|e| {
            Failure::runtime(format!(
                "masking the command's output failed ({})",
                crate::fsutil::io_kind(&e)
            ))
        })
}

#[derive(Debug, clap::Subcommand)]
pub enum InitCommand {
    /// Wire Claude Code: public variables in the session, sensitive ones per command, masked.
    #[command(after_help = super::examples::after(super::examples::INIT_TEXT, super::examples::INIT_CLAUDE))]
    Claude(ClaudeArgs),
    /// Wire Codex the same way (its hooks.json).
    #[command(after_help = super::examples::INIT_CODEX)]
    Codex(ClaudeArgs),
    /// Wire Gemini CLI (its settings.json): BeforeTool rewrites each shell
    /// command, AfterTool masks every tool result.
    #[command(after_help = super::examples::INIT_GEMINI)]
    Gemini(ClaudeArgs),
    /// Wire OpenCode: a plugin file of agentenv's (shell.env,
    /// tool.execute.before).
    #[command(after_help = super::examples::INIT_OPENCODE)]
    Opencode(ClaudeArgs),
    /// Wire GitHub Copilot CLI: a hooks file of agentenv's (preToolUse,
    /// modifiedArgs).
    #[command(after_help = super::examples::INIT_COPILOT)]
    Copilot(ClaudeArgs),
}

#[derive(Debug, clap::Args)]
pub struct ClaudeArgs {
    /// Edit the user's file: Claude Code's $CLAUDE_CONFIG_DIR/settings.json,
    /// else ~/.claude/settings.json; Codex's $CODEX_HOME/hooks.json, else
    /// ~/.codex/hooks.json (the default).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Edit DIR/.claude/settings.json (DIR/.codex/hooks.json), shared with
    /// the project; the hooks name `agentenv` by bare name there.
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the resulting file on stdout; write nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Take out agentenv's entries (only those).
    #[arg(long = "remove")]
    pub remove: bool,
    /// The earlier wiring: every value (sensitive ones too) in the agent's
    /// environment, for a client that cannot rewrite commands. Each session
    /// start then warns the user.
    #[arg(long = "export-values", conflicts_with = "remove")]
    pub export_values: bool,
}

/// Largest settings file read.
const MAX_SETTINGS: u64 = 16 << 20;

pub fn init(c: InitCommand) -> Exit {
    match c {
        InitCommand::Claude(a) => run_init(Client::Claude, a),
        InitCommand::Codex(a) => run_init(Client::Codex, a),
        InitCommand::Gemini(a) => run_init(Client::Gemini, a),
        InitCommand::Opencode(a) => run_init(Client::OpenCode, a),
        InitCommand::Copilot(a) => run_init(Client::Copilot, a),
    }
}

/// The file `init` edits.
pub(crate) fn settings_path(
    client: Client,
    a: &ClaudeArgs,
    env: &crate::core::Env,
) -> Result<PathBuf, String> {
    let cwd = crate::fsutil::current_dir()?;
    let f = client.facts();
    if let Some(dir) = &a.project {
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

/// For `--project DIR`: refuse a settings file (or its directory) that a
/// symbolic link places outside the project.
pub(crate) fn check_inside_project(project: &Path, path: &Path) -> Result<(), String> {
    let root = std::fs::canonicalize(project).map_err(|e| {
        format!(
            "--project {}: {}",
            project.display(),
            crate::fsutil::io_kind(&e)
        )
    })?;
    let dir = path.parent().expect("DIR/.claude/…");
    // The directory: where it really is (when it exists).
    let real_dir = match std::fs::canonicalize(dir) {
        Ok(d) => d,
        Err(_) => return Ok(()), // created by init, inside the project
    };
    let target = if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let t = std::fs::read_link(path).map_err(|e| crate::fsutil::io_kind(&e))?;
        let t = real_dir.join(t);
        match std::fs::canonicalize(&t) {
            Ok(c) => c,
            Err(_) => crate::agent::guard::normalize(&t),
        }
    } else {
        real_dir.join(path.file_name().expect("a file name"))
    };
    if target.starts_with(&root) {
        Ok(())
    } else {
        Err(format!(
            "it is a symbolic link (or in one) that leads out of the project, to {}; not written (edit that file yourself, or replace the link)",
            target.display()
        ))
    }
}

/// The program the user-settings hook names: the `PATH` entry that is this
/// binary, else the binary's own path; `None` when it has no UTF-8 path.
pub(crate) fn own_program(env: &crate::core::Env) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let exe = std::env::current_exe().ok()?;
    let me = std::fs::metadata(&exe).ok()?;
    let on_path = crate::core::get(env, "PATH").and_then(|p| {
        std::env::split_paths(p)
            .filter(|d| d.is_absolute())
            .map(|d| d.join("agentenv"))
            .find(|c| {
                std::fs::metadata(c).is_ok_and(|m| m.dev() == me.dev() && m.ino() == me.ino())
            })
    });
    on_path.unwrap_or(exe).into_os_string().into_string().ok()
}

fn run_init(client: Client, a: ClaudeArgs) -> Exit {
    if client.facts().setup == crate::agent::client::Setup::OwnFile {
        return run_init_own_file(client, a);
    }
    if a.export_values && client.facts().env_file_var.is_empty() {
        return Err(Failure::usage(format!(
            "init {}: --export-values is not needed: the client's hook rewrites each shell command",
            client.name()
        )));
    }
    let env = crate::core::process_env();
    let path = settings_path(client, &a, &env).map_err(Failure::runtime)?;
    let shown = path.display();
    let unchanged =
        |msg: String| Failure::runtime(format!("{shown}: {msg}; the file was not changed"));
    if let Some(project) = &a.project {
        check_inside_project(project, &path).map_err(unchanged)?;
    }
    let (bytes, exists) = match crate::fsutil::read_input(&path, MAX_SETTINGS) {
        Ok(b) => (b, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), false),
        Err(e) => {
            return Err(Failure::runtime(format!(
                "{shown}: cannot read it ({})",
                crate::fsutil::io_kind(&e)
            )));
        }
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
    let program = if a.project.is_some() {
        "agentenv".to_string()
    } else {
        match own_program(&env) {
            Some(p) => shlex_quote(&p),
            None => {
                crate::warn!("agentenv's own path is not UTF-8; the hooks name it by bare name");
                "agentenv".to_string()
            }
        }
    };
    let wiring = Wiring::new(client, &program, a.export_values);
    let (mut out, outcome) = if a.remove {
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
    if a.dry_run {
        super::write_stdout(out.as_bytes())?;
    }
    let what = if client.facts().deny_rules.is_empty() {
        "agentenv's hooks"
    } else {
        "agentenv's hooks and deny rules"
    };
    match outcome {
        Outcome::AlreadyPresent => {
            say(format_args!(
                "{what} are already in {shown}; nothing changed"
            ));
            return Ok(0);
        }
        Outcome::NotPresent => {
            say(format_args!("none of {what} in {shown}; nothing changed"));
            return Ok(0);
        }
        _ => {}
    }
    if !a.dry_run {
        write_settings(&path, out.as_bytes(), exists).map_err(|e| {
            Failure::runtime(format!(
                "{shown}: cannot write it ({})",
                crate::fsutil::io_kind(&e)
            ))
        })?;
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
    let dry = if a.dry_run {
        "dry run: would have "
    } else {
        ""
    };
    say(format_args!("{dry}{did} {what} {to} {shown}"));
    if outcome != Outcome::Removed {
        if a.export_values {
            crate::warn!(
                "--export-values: every value, sensitive ones too, goes into the agent's environment and command lines; each session start will say so"
            );
        } else if client.facts().session_start_event.is_empty() {
            say(format_args!(
                "each shell command gets the session's variables (a project store loads once `agentenv allow` recorded it), its output masked; every tool result is masked before the model reads it"
            ));
        } else {
            say(format_args!(
                "the session gets the public variables only (the start hook has --require-trust: a project store loads once `agentenv allow` recorded it); each shell command gets the sensitive ones, its output masked"
            ));
            if client == Client::Codex && !a.dry_run {
                say(format_args!(
                    "next, in Codex: run /hooks and trust agentenv's hooks (Codex runs a hook only once you trusted it; a headless run needs --dangerously-bypass-hook-trust)"
                ));
            }
        }
    }
    Ok(0)
}

/// Write the settings atomically: an existing file keeps its mode; a new
/// one is 0600 in a directory created 0700.
pub(crate) fn write_settings(path: &Path, bytes: &[u8], exists: bool) -> std::io::Result<()> {
    use crate::fsutil::{write_atomic, Mode};
    if exists {
        return write_atomic(path, bytes, Mode::KeepOrUmask, false);
    }
    if let Some(dir) = path.parent() {
        if !dir.is_dir() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    write_atomic(path, bytes, Mode::Exactly(0o600), false)
}

// The clients wired through a file of agentenv's own rather than an edit
// of the client's settings (`init opencode`, `init copilot`), and the hook
// events only one client has (Gemini CLI's `after-tool`, OpenCode's
// `shell-env`). docs/agents.md.
//
// * **OpenCode** loads every `*.js` in `~/.config/opencode/plugins/` (or
//   `DIR/.opencode/plugins/`): `init opencode` writes `agentenv.js` there
//   ([`OPENCODE_PLUGIN`]). Its `shell.env` hook gives each shell call the
//   session's public variables (`agentenv hook opencode shell-env`, read
//   from a pipe: no value on a command line); its `tool.execute.before`
//   hook asks `agentenv hook opencode pre-tool-use` (the event on stdin,
//   as Claude Code's) and rewrites the shell command (sensitive variables
//   and masking, as for Codex) or throws on a store path.
// * **Copilot CLI** loads every `*.json` in `~/.copilot/hooks/` (or a
//   repository's `.github/hooks/`): `init copilot` writes `agentenv.json`,
//   one `preToolUse` hook answering with `modifiedArgs` or a deny.
//
// The file is agentenv's alone: re-running rewrites it only when it
// differs; `--remove` deletes it (and nothing else); a file of that name
// that agentenv did not write is refused, never overwritten.
//
// * `hook gemini after-tool` reads Gemini CLI's AfterTool event; when the
//   tool's result (`tool_response.llmContent`) holds a form of a sensitive
//   value, it answers `decision: deny` with the masked result as the
//   `reason`, which Gemini CLI sends the model instead of the result
//   ("Tool result blocked: …"); otherwise nothing.

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
fn run_init_own_file(client: Client, a: ClaudeArgs) -> Exit {
    if a.export_values {
        return Err(Failure::usage(format!(
            "init {}: --export-values is not needed: the client's hook rewrites each shell command",
            client.name()
        )));
    }
    let env = crate::core::process_env();
    let path = settings_path(client, &a, &env).map_err(Failure::runtime)?;
    let shown = path.display().to_string();
    if let Some(project) = &a.project {
        check_inside_project(project, &path)
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
        match own_program(&env) {
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
        write_settings(&path, text.as_bytes(), current.is_some()).map_err(|e| {
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
    super::session::run_env(hook_env_args("json", None, true))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_helper_line_skips_clap() {
        let a = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for other in [
            &["agentenv", "hook", "claude", "wrap"][..],
            &["agentenv", "hook", "claude", "wrap", "--entry"],
            &["agentenv", "hook", "claude", "wrap", "--entry", ""],
            &["agentenv", "hook", "fish", "wrap", "--entry", "x"],
            &["agentenv", "hook", "claude", "run", "--entry", "x"],
            &["agentenv", "hook", "claude", "wrap", "--entry", "x", "-v"],
            &["agentenv", "-q", "hook", "claude", "wrap", "--entry"],
        ] {
            assert!(wrap_fast_path(a(other).into_iter()).is_none(), "{other:?}");
        }
    }
}
