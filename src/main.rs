#![forbid(unsafe_code)]

use clap::Parser;

fn main() {
    let cli = agentenv::cli::Cli::parse();
    let code = agentenv::cli::run(cli);
    std::process::exit(code);
}
