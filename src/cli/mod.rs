//! The command line: clap definitions and dispatch. Each command's
//! arguments and runner live in their own file.

pub(crate) mod agent;
pub(crate) mod audit;
pub(crate) mod completions;
pub(crate) mod dotenv;
pub(crate) mod examples;
pub(crate) mod harness;
pub(crate) mod import;
pub(crate) mod launch;
pub(crate) mod man;
pub(crate) mod masked;
pub(crate) mod mcp;
pub(crate) mod session;
pub(crate) mod set;
pub(crate) mod status;
pub(crate) mod trust;

use clap::{ArgAction, Parser, Subcommand};

/// Build the environment a process starts with, from layers.
#[derive(Debug, Parser)]
#[command(name = "agentenv", version, about, propagate_version = true)]
#[command(after_help = examples::AGENTENV)]
pub struct Cli {
    /// Less output: -q errors only, -qq nothing.
    #[arg(short = 'q', long = "quiet", action = ArgAction::Count, global = true)]
    pub quiet: u8,
    /// More output: -v info, -vv debug (names only, never values).
    #[arg(short = 'v', long = "verbose", action = ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the session environment assembled from the agent stores.
    #[command(after_help = examples::ENV)]
    Env(session::EnvArgs),
    /// Run a command in the assembled session environment.
    #[command(after_help = examples::EXEC)]
    Exec(session::ExecArgs),
    /// Mask every form of the session's sensitive values: a filter from stdin to stdout.
    #[command(after_help = examples::REDACT)]
    Redact(session::RedactArgs),
    /// Show where each variable of the session environment came from.
    #[command(after_help = examples::EXPLAIN)]
    Explain(session::ExplainArgs),
    /// Fill the environment from the operator's .env files, then run a command.
    Launch(launch::LaunchArgs),
    /// Resolve, lint and run harness YAML environments.
    #[command(subcommand)]
    #[command(after_help = examples::HARNESS)]
    Harness(harness::HarnessCommand),
    /// Parse and check dotenv files with the project's grammar.
    #[command(subcommand)]
    #[command(after_help = examples::DOTENV)]
    Dotenv(dotenv::DotenvCommand),
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Print the shell hook: eval "$(agentenv hook bash)" in ~/.bashrc.
    #[command(after_help = examples::after(examples::HOOK_TEXT, examples::HOOK))]
    Hook(trust::HookArgs),
    /// Let the shell hook (and --require-trust) load a project's .agents as it is now.
    #[command(after_help = examples::ALLOW)]
    Allow(trust::TrustArgs),
    /// Forget an allowed project's .agents.
    #[command(after_help = examples::DENY)]
    Deny(trust::TrustArgs),
    /// Wire agentenv into an agent: its hooks, deny rules and one allow rule.
    #[command(subcommand)]
    #[command(after_help = examples::after(examples::INIT_TEXT, examples::INIT))]
    Init(agent::InitCommand),
    /// Show what env would walk here (stores, trust, files, cache); runs nothing.
    #[command(after_help = examples::STATUS)]
    Status(status::StatusArgs),
    /// Search agent transcripts and shell histories for the stores' secrets.
    Audit(audit::AuditArgs),
    /// Type a secret into a store file at the terminal, echo off.
    Set(set::SetArgs),
    /// Move a store's plain values into a secret backend; leave references.
    Import(import::ImportArgs),
    /// Find literal secrets in MCP server configurations; move them into a store.
    #[command(subcommand)]
    #[command(after_help = examples::MCP)]
    Mcp(mcp::McpCommand),
    /// Print the man page of every command, or write one page per command.
    Man(man::ManArgs),
}

impl Cli {
    /// Log level from -q/-v counts (see `crate::log`).
    pub fn log_level(&self) -> i8 {
        (self.verbose.min(2) as i8) - (self.quiet.min(2) as i8)
    }
}

/// How a command ends: `Ok(status)` — the process exit status (0, or 1
/// for "checked and found errors", a child's status …) — or a [`Failure`]
/// that [`run`] prints once as `agentenv: error: <message>`.
pub type Exit = Result<i32, Failure>;

/// A command that could not do its job: the exit code and a value-free
/// message (files, lines, names; never a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    /// Exit 1: a runtime error the user must fix (docs/commands.md#commands).
    pub fn runtime(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
    /// Exit 2: a usage error.
    pub fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
}

/// `exec` and `run_masked` could not run the command: its code (127, 126,
/// 1) and message, printed once like every failure.
impl From<crate::process::ExecError> for Failure {
    fn from(e: crate::process::ExecError) -> Failure {
        Failure {
            code: e.code,
            message: e.message,
        }
    }
}

/// A bad `--format` value: exit 1, the reference's message.
impl From<crate::render::UnknownFormat> for Failure {
    fn from(e: crate::render::UnknownFormat) -> Failure {
        Failure::runtime(e.to_string())
    }
}

/// The one stdout writer. The rule for a closed pipe (`agentenv env |
/// head -1`, a reader that went away): the reader has what it wanted, so
/// it is not an error — nothing is printed and the command's own status
/// stands (`Ok`). Any other write error (a full disk behind `> file`,
/// `/dev/full`) is a [`Failure`] with exit 1.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::runtime(format!(
            "cannot write to stdout: {}",
            crate::fsutil::io_kind(&e)
        ))),
    }
}

/// Write a file the command produces ([`crate::fsutil::write_atomic`]);
/// a failure is exit 1 with the text `message` makes of the path and the
/// error's kind ([`crate::fsutil::io_kind`]), never of the bytes.
pub fn write_file(
    path: &std::path::Path,
    bytes: &[u8],
    mode: crate::fsutil::Mode,
    create_parents: bool,
    message: impl FnOnce(std::path::Display<'_>, String) -> String,
) -> Result<(), Failure> {
    crate::fsutil::write_atomic(path, bytes, mode, create_parents)
        .map_err(|e| Failure::runtime(message(path.display(), crate::fsutil::io_kind(&e))))
}

/// [`write_stdout`], then status 0: the end of a command whose output
/// is all it has to say.
pub fn print(bytes: &[u8]) -> Exit {
    write_stdout(bytes).map(|()| 0)
}

/// The current directory; the failure names the OS error
/// ([`crate::fsutil::current_dir`]).
pub fn current_dir() -> Result<std::path::PathBuf, Failure> {
    crate::fsutil::current_dir().map_err(Failure::runtime)
}

/// A line on stderr, `agentenv: <msg>`, unless `-q`: what a command did
/// (`allowed DIR`, `added the SessionStart hook to FILE`), not a log line.
pub fn say(msg: std::fmt::Arguments<'_>) {
    if crate::log::level() >= 0 {
        use std::io::Write;
        let text = crate::log::escape_controls(&msg.to_string(), false).into_owned();
        let _ = writeln!(std::io::stderr().lock(), "agentenv: {text}");
    }
}

/// Print a failure once; the process exit status.
fn finish(exit: Exit) -> i32 {
    match exit {
        Ok(code) => code,
        Err(f) => {
            crate::error!("{}", f.message);
            f.code
        }
    }
}

/// Parse the process arguments and run: the binary's whole life.
///
/// A clap error prints clap's own message (with its suggestion) and exits 2,
/// except an invalid `--format` value of a clap-parsed format (explain,
/// status, harness sandbox-env), which is exit 1 as every bad `--format` is (a
/// runtime error the user must fix, docs/commands.md#commands). `--help`/`--version`
/// exit 0.
pub fn main() -> i32 {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if let Some(exit) = agent::wrap_fast_path(std::env::args_os()) {
        return finish(exit);
    }
    // The secret references' value cache (hidden: started by a load).
    if std::env::args_os().nth(1).as_deref()
        == Some(std::ffi::OsStr::new(crate::refs::cache::SERVE_ARG))
        && std::env::args_os().len() == 2
    {
        return crate::refs::cache::serve();
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(mut e) => {
            if e.kind() == ErrorKind::InvalidSubcommand {
                suggest_subcommand(&mut e);
            }
            // A value given but not accepted (a missing value stays a usage
            // error).
            let bad_format = e.kind() == ErrorKind::InvalidValue
                && matches!(
                    e.get(ContextKind::InvalidArg),
                    Some(ContextValue::String(a)) if a.starts_with("--format")
                )
                && matches!(
                    e.get(ContextKind::InvalidValue),
                    Some(ContextValue::String(v)) if !v.is_empty()
                );
            let _ = e.print();
            return if bad_format { 1 } else { e.exit_code() };
        }
    };
    run(cli)
}

/// Put the nearest subcommand into clap's "a similar subcommand exists"
/// tip. clap ranks by Jaro similarity, which in a three-letter name sees
/// nothing in common between `evn` and `env` and suggests `deny`; here the
/// nearest name by edit distance (a swap of two neighbours is one edit)
/// wins, when it is at most 2 edits away and not the whole name.
fn suggest_subcommand(e: &mut clap::Error) {
    use clap::error::{ContextKind, ContextValue};
    use clap::CommandFactory;
    let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidSubcommand) else {
        return;
    };
    let bad = bad.clone();
    // The command whose subcommand was mistyped: follow the words before it.
    let root = Cli::command();
    let mut cmd = &root;
    for a in std::env::args().skip(1) {
        if a == bad {
            break;
        }
        if let Some(sub) = cmd.find_subcommand(&a) {
            cmd = sub;
        }
    }
    let best = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| (strsim::osa_distance(&bad, s.get_name()), s.get_name()))
        .filter(|&(d, name)| d <= 2 && d < name.len())
        .min_by_key(|&(d, _)| d);
    if let Some((_, name)) = best {
        e.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![name.to_string()]),
        );
    }
}

/// Run the parsed command; returns the process exit code. Every command's
/// failure is printed here, once.
pub fn run(cli: Cli) -> i32 {
    crate::log::set_level(cli.log_level());
    finish(match cli.command {
        Command::Env(a) => session::run_env(a),
        Command::Exec(a) => session::run_exec(a),
        Command::Redact(a) => session::run_redact(a),
        Command::Explain(a) => session::run_explain(a),
        Command::Launch(a) => launch::run(a),
        Command::Harness(c) => harness::run(c),
        Command::Dotenv(c) => dotenv::run(c),
        Command::Completions(a) => completions::run(a),
        Command::Hook(a) => match agent::Client::parse(&a.shell) {
            Some(client) => match &a.event {
                Some(event) => agent::run(client, event, a.export_values, a.entry.as_deref()),
                None => Err(Failure::usage(format!(
                    "hook {}: name the event (pre-tool-use)",
                    a.shell
                ))),
            },
            None => trust::run_hook(a),
        },
        Command::Allow(a) => trust::run_allow(a),
        Command::Deny(a) => trust::run_deny(a),
        Command::Init(c) => agent::init(c),
        Command::Status(a) => status::run(a),
        Command::Audit(a) => audit::run(a),
        Command::Set(a) => set::run(a),
        Command::Import(a) => import::run(a),
        Command::Mcp(c) => mcp::run(c),
        Command::Man(a) => man::run(a),
    })
}

/// Render for stdout, printing one warning per variable the format had to
/// leave out (`github`, `docker`; names only). The library's
/// [`crate::render::render`] prints nothing.
pub(crate) fn render_shown(format: crate::render::Format, view: &crate::render::View) -> String {
    let r = crate::render::render_checked(format, view);
    for w in crate::render::omission_warnings(format, &r) {
        crate::warn!("{w}");
    }
    r.text
}
