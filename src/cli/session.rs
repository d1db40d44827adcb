//! `agentenv env`, `exec`, `explain`.
//
// OWNER: session work (issues 3 and 4).

use std::ffi::OsString;
use std::path::PathBuf;

/// Which stores to walk.
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Walk no project: the user (and system) store only.
    #[arg(short = 'g', long = "global")]
    pub global: bool,
    /// The user store (default: $AGENTS_HOME, else ~/.agents).
    #[arg(long = "agents-dir", value_name = "DIR")]
    pub agents_dir: Option<PathBuf>,
    /// Seconds each env.py or plain file may run (default: $AGENTS_ENV_TIMEOUT, else 30).
    #[arg(long = "timeout", value_name = "SECS")]
    pub timeout: Option<f64>,
}

#[derive(Debug, clap::Args)]
pub struct EnvArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Output format.
    #[arg(long = "format", value_name = "F", default_value = "auto")]
    pub format: String,
    /// Print only what differs from the current environment.
    #[arg(long = "diff")]
    pub diff: bool,
}

#[derive(Debug, clap::Args)]
pub struct ExecArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Stamp this agent's identity unconditionally.
    #[arg(long = "agent", value_name = "NAME")]
    pub agent: Option<String>,
    /// The command and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// text or json.
    #[arg(long = "format", value_name = "F", default_value = "text")]
    pub format: String,
    /// Show values (hidden by default).
    #[arg(long = "show-values")]
    pub show_values: bool,
    /// Variables to explain (default: every changed one).
    pub vars: Vec<String>,
}

pub fn run_env(_a: EnvArgs) -> i32 {
    crate::error!("env: not implemented yet");
    1
}
pub fn run_exec(_a: ExecArgs) -> i32 {
    crate::error!("exec: not implemented yet");
    1
}
pub fn run_explain(_a: ExplainArgs) -> i32 {
    crate::error!("explain: not implemented yet");
    1
}
