//! `agentenv completions bash|zsh|fish|powershell`
//!
//! The scripts are clap_complete's static ones, generated from a copy of the
//! command tree in which the options that take a fixed set of words but are
//! parsed as text (`--format`, `--forge`, the hook's SHELL: their parsing and
//! messages follow the reference tools) carry those words as possible values,
//! so every shell completes them. Options that are clap `ValueEnum`s
//! (`--platform`, …) already carry theirs.

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{CommandFactory, ValueEnum};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Debug, clap::Args)]
#[command(after_help = super::examples::COMPLETIONS)]
pub struct CompletionsArgs {
    /// The shell to generate completions for.
    pub shell: Shell,
}

/// The `--format` words of `env` and `dotenv parse`: every accepted name;
/// the reference's aliases (`sh`, `pwsh`, …) are accepted but not offered.
fn render_formats() -> Vec<PossibleValue> {
    let mut out = Vec::new();
    for &name in crate::render::ACCEPTED.iter().chain(crate::render::OWN) {
        let canonical = match crate::render::parse_format(name) {
            Ok(crate::render::FormatChoice::Named { format, .. }) => format.name(),
            _ => name,
        };
        out.push(PossibleValue::new(name).hide(canonical != name));
    }
    out
}

/// The fixed words of an option parsed as text, by command path and
/// argument id; `None` for an argument that takes free text.
pub fn words_for(path: &str, arg: &str) -> Option<Vec<PossibleValue>> {
    let plain = |w: &[&'static str]| Some(w.iter().map(|&s| PossibleValue::new(s)).collect());
    match (path, arg) {
        ("agentenv env", "format") | ("agentenv dotenv parse", "format") => Some(render_formats()),
        ("agentenv explain", "format") | ("agentenv harness explain", "format") => {
            plain(&["text", "json"])
        }
        ("agentenv harness sandbox-env", "format") => plain(&["export", "dotenv"]),
        ("agentenv status", "format") => plain(&["text", "json"]),
        (_, "forge") => plain(&crate::harness::validate::FORGE_KEYS),
        ("agentenv hook", "shell") => plain(&["bash", "zsh", "fish"]),
        _ => None,
    }
}

/// The command tree the completion scripts are generated from.
pub fn completion_command() -> clap::Command {
    fn fill(cmd: clap::Command, path: &str) -> clap::Command {
        let mut cmd = cmd;
        let ids: Vec<String> = cmd
            .get_arguments()
            .filter(|a| a.get_possible_values().is_empty())
            .map(|a| a.get_id().to_string())
            .collect();
        for id in ids {
            if let Some(words) = words_for(path, &id) {
                cmd = cmd.mut_arg(id, |a| a.value_parser(PossibleValuesParser::new(words)));
            }
        }
        let subs: Vec<String> = cmd
            .get_subcommands()
            .map(|s| s.get_name().to_string())
            .collect();
        for name in subs {
            let sub_path = format!("{path} {name}");
            cmd = cmd.mut_subcommand(name, |s| fill(s, &sub_path));
        }
        cmd
    }
    fill(super::Cli::command(), "agentenv")
}

pub fn run(args: CompletionsArgs) -> i32 {
    use clap_complete::Shell as S;
    let shell = match args.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Powershell => S::PowerShell,
    };
    let mut cmd = completion_command();
    clap_complete::generate(shell, &mut cmd, "agentenv", &mut std::io::stdout());
    0
}
