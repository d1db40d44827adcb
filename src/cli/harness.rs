//! `agentenv harness resolve | lint | run | sandbox-env`
//
// OWNER: harness work (issue 6).

use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct HarnessOpts {
    /// The harness YAML file.
    pub file: PathBuf,
    /// Forge platform (github, gitlab, jira).
    #[arg(long = "forge", value_name = "P")]
    pub forge: Option<String>,
    /// FULLSEND_DIR for expansion.
    #[arg(long = "fullsend-dir", value_name = "D")]
    pub fullsend_dir: Option<PathBuf>,
    /// Dotenv file loaded first (repeatable).
    #[arg(long = "env-file", value_name = "F")]
    pub env_file: Vec<PathBuf>,
    /// Event JSON for CEL guards.
    #[arg(long = "event", value_name = "FILE")]
    pub event: Option<PathBuf>,
    /// Config JSON or YAML for CEL guards.
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory of content-addressed bases for https:// base URLs.
    #[arg(long = "base-cache", value_name = "DIR")]
    pub base_cache: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum HarnessCommand {
    /// Print the resolved environment as JSON.
    Resolve(HarnessOpts),
    /// Print diagnostics; exit 1 only on errors.
    Lint(HarnessOpts),
    /// Run a command with the effective runner environment.
    Run {
        #[command(flatten)]
        opts: HarnessOpts,
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "CMD"
        )]
        command: Vec<OsString>,
    },
    /// Write the sandbox environment file.
    SandboxEnv {
        #[command(flatten)]
        opts: HarnessOpts,
        /// Output file (default: stdout).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// export or dotenv.
        #[arg(long = "format", value_name = "F", default_value = "export")]
        format: String,
    },
}

pub fn run(_c: HarnessCommand) -> i32 {
    crate::error!("harness: not implemented yet");
    1
}
