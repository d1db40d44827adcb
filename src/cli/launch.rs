//! `agentenv launch`
//
// OWNER: operator work (issue 5).

use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct LaunchArgs {
    /// Fallback plugin root (default: the current directory).
    #[arg(long = "plugin-root", value_name = "DIR")]
    pub plugin_root: Option<PathBuf>,
    /// JSON object of manifest defaults (name → string).
    #[arg(long = "manifest-env", value_name = "FILE")]
    pub manifest_env: Option<PathBuf>,
    /// Platform whose name comparison to use (default: the host).
    #[arg(long = "platform", value_name = "P")]
    pub platform: Option<String>,
    /// Do not read any .env file; tell the child so.
    #[arg(long = "no-env")]
    pub no_env: bool,
    /// Write the report (names only) to FILE.
    #[arg(long = "report", value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// The command and its arguments.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

pub fn run(_a: LaunchArgs) -> i32 {
    crate::error!("launch: not implemented yet");
    1
}
