//! `agentenv dotenv parse | check`
//
// OWNER: dotenv work (issue 2, point 3).

use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub enum DotenvCommand {
    /// Print the parsed variables (later files win).
    Parse {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format (default json).
        #[arg(long = "format", value_name = "F", default_value = "json")]
        format: String,
    },
    /// Report ignored lines, unterminated quotes, trailing text, duplicates.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn run(_c: DotenvCommand) -> i32 {
    crate::error!("dotenv: not implemented yet");
    1
}
