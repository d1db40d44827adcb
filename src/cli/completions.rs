//! `agentenv completions bash|zsh|fish|powershell`

use clap::{CommandFactory, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    pub shell: Shell,
}

pub fn run(args: CompletionsArgs) -> i32 {
    use clap_complete::Shell as S;
    let shell = match args.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Powershell => S::PowerShell,
    };
    let mut cmd = super::Cli::command();
    clap_complete::generate(shell, &mut cmd, "agentenv", &mut std::io::stdout());
    0
}
