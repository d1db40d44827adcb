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

pub fn run(args: CompletionsArgs) -> super::Exit {
    use clap_complete::Shell as S;
    let shell = match args.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Powershell => S::PowerShell,
    };
    let mut cmd = completion_command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "agentenv", &mut script);
    match args.shell {
        Shell::Powershell => {
            script = powershell_values(&String::from_utf8_lossy(&script), &cmd).into_bytes();
        }
        Shell::Fish => script.extend_from_slice(fish_positionals(&cmd).as_bytes()),
        Shell::Zsh => {
            script = zsh_options_after_files(&String::from_utf8_lossy(&script), &cmd).into_bytes()
        }
        Shell::Bash => {}
    }
    super::print(&script)
}

/// Every option and first positional that takes fixed words, as the keys
/// the PowerShell completer looks up: `agentenv;env;--format`, and
/// `agentenv;hook;*` for the first positional of `hook`.
pub fn value_table(cmd: &clap::Command) -> Vec<(String, Vec<String>)> {
    fn walk(c: &clap::Command, path: &str, out: &mut Vec<(String, Vec<String>)>) {
        for a in c.get_arguments() {
            let words: Vec<String> = a
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_string())
                .collect();
            if words.is_empty() || a.is_hide_set() {
                continue;
            }
            if let Some(l) = a.get_long() {
                out.push((format!("{path};--{l}"), words.clone()));
            }
            if let Some(s) = a.get_short() {
                out.push((format!("{path};-{s}"), words.clone()));
            }
            if a.is_positional() && a.get_index() == Some(1) {
                out.push((format!("{path};*"), words));
            }
        }
        for sub in c.get_subcommands() {
            walk(sub, &format!("{path};{}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(cmd, "agentenv", &mut out);
    out
}

/// clap_complete writes a repeated positional as `'*::files…'`, which in
/// zsh's `_arguments` ends option parsing: `dotenv parse .env --format <TAB>`
/// offered files. `'*:files…'` keeps options completing after the files.
/// A command's trailing argv (`exec -- CMD…`) keeps `*::`.
fn zsh_options_after_files(script: &str, cmd: &clap::Command) -> String {
    fn ids(c: &clap::Command, out: &mut Vec<String>) {
        for a in c.get_arguments() {
            let many = a.get_num_args().is_some_and(|n| n.max_values() > 1)
                || matches!(a.get_action(), clap::ArgAction::Append);
            if a.is_positional() && many && !a.is_trailing_var_arg_set() && !a.is_last_set() {
                out.push(a.get_id().to_string());
            }
        }
        for s in c.get_subcommands() {
            ids(s, out);
        }
    }
    let mut cmd = cmd.clone();
    cmd.build();
    let mut names = Vec::new();
    ids(&cmd, &mut names);
    let mut out = script.to_string();
    for id in names {
        out = out
            .replace(&format!("'*::{id} -- "), &format!("'*:{id} -- "))
            .replace(&format!("'*::{id}:"), &format!("'*:{id}:"));
    }
    out
}

/// clap_complete's fish script completes the words of options but not of
/// positionals (`agentenv hook <TAB>`); these lines add them.
fn fish_positionals(cmd: &clap::Command) -> String {
    let mut out = String::from("# agentenv: the words of first positionals.\n");
    for (key, words) in value_table(cmd) {
        let Some(path) = key.strip_suffix(";*") else {
            continue;
        };
        let parts: Vec<&str> = path.split(';').skip(1).collect();
        let Some((first, rest)) = parts.split_first() else {
            continue;
        };
        let mut cond = format!("__fish_agentenv_using_subcommand {first}");
        for r in rest {
            cond.push_str(&format!("; and __fish_seen_subcommand_from {r}"));
        }
        out.push_str(&format!(
            "complete -c agentenv -n \"{cond}\" -f -a \"{}\"\n",
            words.join(" ")
        ));
    }
    out
}

/// clap_complete's PowerShell script completes option names only; this
/// adds the words of options and positionals, looked up by the command path
/// (its longest known prefix, since a file argument ends clap's path too)
/// and the word before the cursor.
fn powershell_values(script: &str, cmd: &clap::Command) -> String {
    let q = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let mut table = String::new();
    for (key, words) in value_table(cmd) {
        let words: Vec<String> = words.iter().map(|w| q(w)).collect();
        table.push_str(&format!("        {} = @({})\n", q(&key), words.join(", ")));
    }
    let block = include_str!("completions.ps1").replace("@TABLE@", &table);
    let anchor = "    $completions = @(switch ($command) {";
    match script.find(anchor) {
        Some(at) => format!("{}{block}{}", &script[..at], &script[at..]),
        None => script.to_string(),
    }
}
