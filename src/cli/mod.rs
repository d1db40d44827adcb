//! The command line: clap definitions and dispatch. Each command's
//! arguments and runner live in their own file.

pub mod completions;
pub mod dotenv;
pub mod examples;
pub mod harness;
pub mod init;
pub mod launch;
pub mod man;
pub mod session;
pub mod status;
pub mod trust;

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
    #[command(after_help = examples::HOOK)]
    Hook(trust::HookArgs),
    /// Let the shell hook (and --require-trust) load a project's .agents as it is now.
    #[command(after_help = examples::ALLOW)]
    Allow(trust::TrustArgs),
    /// Forget an allowed project's .agents.
    #[command(after_help = examples::DENY)]
    Deny(trust::TrustArgs),
    /// Wire agentenv into an agent: init claude adds its SessionStart hook.
    #[command(subcommand)]
    #[command(after_help = examples::INIT)]
    Init(init::InitCommand),
    /// Show what env would walk here (stores, trust, files, cache); runs nothing.
    #[command(after_help = examples::STATUS)]
    Status(status::StatusArgs),
    /// Print the man page of every command, or write one page per command.
    Man(man::ManArgs),
}

impl Cli {
    /// Log level from -q/-v counts (see `crate::log`).
    pub fn log_level(&self) -> i8 {
        (self.verbose.min(2) as i8) - (self.quiet.min(2) as i8)
    }
}

/// Run the parsed command; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    crate::log::set_level(cli.log_level());
    match cli.command {
        Command::Env(a) => session::run_env(a),
        Command::Exec(a) => session::run_exec(a),
        Command::Explain(a) => session::run_explain(a),
        Command::Launch(a) => launch::run(a),
        Command::Harness(c) => harness::run(c),
        Command::Dotenv(c) => dotenv::run(c),
        Command::Completions(a) => completions::run(a),
        Command::Hook(a) => trust::run_hook(a),
        Command::Allow(a) => trust::run_allow(a),
        Command::Deny(a) => trust::run_deny(a),
        Command::Init(c) => init::run(c),
        Command::Status(a) => status::run(a),
        Command::Man(a) => man::run(a),
    }
}
