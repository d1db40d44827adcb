//! `agentenv hook CLIENT EVENT` and `agentenv init CLIENT`: the
//! arguments, stdin/stdout and exit statuses of the agent wiring; the work
//! is `crate::agent`'s (`install` for `init`, `events` for the hooks).

use super::{say, Exit, Failure};
use crate::agent::events::{self, Answer};
pub(crate) use crate::agent::hook::Client;
use crate::agent::install;
use std::path::{Path, PathBuf};

/// `agentenv hook CLIENT EVENT [ARGS…]`.
pub fn run(client: Client, event: &str, export_values: bool, entry: Option<&Path>) -> Exit {
    let known = client.events();
    match event {
        "pre-tool-use" => answer(events::pre_tool_use(client, &mut std::io::stdin())),
        "session-start" if known.contains(&event) => session_start(client, export_values),
        "after-tool" if known.contains(&event) => {
            answer(events::after_tool(client, &mut std::io::stdin()))
        }
        // The session's public variables as a JSON object (`env
        // --public-only --require-trust --diff --cache --format json`),
        // for OpenCode's plugin's `shell.env`.
        "shell-env" if known.contains(&event) => {
            super::session::run_env(hook_env_args("json", None, true))
        }
        "daemon" => Ok(crate::agent::daemon::serve()),
        "wrap" => match entry {
            Some(entry) => events::run_command_helper(entry)
                .map(|()| 0)
                .map_err(Failure::from),
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

/// A hook's answer printed: its line on stdout, its status.
fn answer(a: Answer) -> Exit {
    if let Some(line) = &a.stdout {
        super::write_stdout(line.as_bytes())?;
    }
    Ok(a.status)
}

impl From<crate::agent::Error> for Failure {
    fn from(e: crate::agent::Error) -> Failure {
        match e {
            crate::agent::Error::Usage(m) => Failure::usage(m),
            crate::agent::Error::Runtime(m) => Failure::runtime(m),
        }
    }
}

/// `hook CLIENT session-start [--export-values]`: the session env into
/// `$CLAUDE_ENV_FILE` / `$CODEX_ENV_FILE` — the public variables only
/// (`env --public-only --require-trust --diff --cache --into`), or every
/// value with `--export-values`, which then warns the user (stderr and the
/// hook's `systemMessage`, never the model's context) — and the functions
/// the rewritten commands call ([`events::after_session_env`]).
fn session_start(client: Client, export_values: bool) -> Exit {
    let base = crate::core::process_env();
    let Some(file) = events::session_env_file(client, &base) else {
        return Ok(0);
    };
    let status =
        super::session::run_env(hook_env_args("export", Some(file.clone()), !export_values))?;
    let a =
        events::after_session_env(client, &file, export_values, &base).map_err(Failure::runtime)?;
    answer(a)?;
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

pub fn init(c: InitCommand) -> Exit {
    let (client, a) = match c {
        InitCommand::Claude(a) => (Client::Claude, a),
        InitCommand::Codex(a) => (Client::Codex, a),
        InitCommand::Gemini(a) => (Client::Gemini, a),
        InitCommand::Opencode(a) => (Client::OpenCode, a),
        InitCommand::Copilot(a) => (Client::Copilot, a),
    };
    let options = install::Options {
        project: a.project,
        dry_run: a.dry_run,
        remove: a.remove,
        export_values: a.export_values,
    };
    let report = install::init(client, &options)?;
    if let Some(text) = &report.stdout {
        super::write_stdout(text.as_bytes())?;
    }
    for line in &report.said {
        say(format_args!("{line}"));
    }
    if let Some(w) = report.warning {
        crate::warn!("{w}");
    }
    Ok(0)
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
