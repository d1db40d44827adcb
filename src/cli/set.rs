//! `agentenv set NAME [--user | --project DIR] [--file FILE]`
//! (docs/audit-set.md#audit-and-set): a value typed at the controlling terminal, never
//! echoed, written into a store's plain file. Without a terminal it refuses:
//! an agent cannot hand a value over through its context.

use super::{Exit, Failure};
pub(crate) use crate::session::edit::Target;
use crate::session::edit::{self, Said};
use std::fs::File;
use std::path::{Path, PathBuf};

const AFTER_HELP: &str = "\
The value is read from the terminal (/dev/tty) with echo off, twice; never
from an argument, stdin or the environment. Without a terminal (an agent's
shell tool, a pipe, CI) set refuses and writes nothing. Ctrl-C cancels.

Writes NAME='value' into the store file (0600, temp file + rename): an
existing NAME=... or export NAME=... is replaced in place, every other line
kept; otherwise appended. Prints the name and the file only. A project store
that was allowed and otherwise unchanged stays allowed.";

#[derive(Debug, clap::Args)]
#[command(after_help = super::examples::after(AFTER_HELP, super::examples::SET))]
pub struct SetArgs {
    /// The variable to set (a shell variable name).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Write into the user store's env file ($AGENTS_HOME, else ~/.agents).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Write into DIR/.agents/local.env (default: the nearest directory
    /// upwards holding .agents, below $HOME, as `allow` finds it).
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The store file to write: env, pre.env, or (project stores only)
    /// local.env, pre.local.env. Default: local.env in a project store,
    /// env in the user store.
    #[arg(long = "file", value_name = "FILE")]
    pub file: Option<String>,
    #[arg(
        long = "to",
        value_name = "REF",
        conflicts_with = "file",
        help = "Put the value at REF (vault://, age:, pass:, keychain:) and its reference in agentenv.toml"
    )]
    pub to: Option<String>,
}

/// An edit's refusal: its own message, exit 2 for a usage error, else 1.
impl From<edit::Error> for Failure {
    fn from(e: edit::Error) -> Failure {
        if e.is_usage() {
            Failure::usage(e.to_string())
        } else {
            Failure::runtime(e.to_string())
        }
    }
}

/// Print what an edit said, in order (before its failure, if any).
pub(crate) fn show(said: Vec<Said>) {
    for s in said {
        match s {
            Said::Did(text) => super::say(format_args!("{text}")),
            Said::Warning(text) => crate::warn!("{text}"),
        }
    }
}

/// The store file of `--user`, `--project DIR` (or neither: the nearest
/// project store) and `--file FILE` ([`edit::target`]).
pub(crate) fn target_for(
    user: bool,
    project_dir: Option<&Path>,
    file: Option<&str>,
) -> Result<Target, Failure> {
    Ok(edit::target(
        user,
        project_dir,
        file,
        &crate::core::process_env(),
    )?)
}

/// Write `name=value` into the target's file ([`edit::write_value`]),
/// printing what it says.
pub(crate) fn write_value(t: &Target, name: &str, value: &[u8]) -> Result<(), Failure> {
    let mut said = Vec::new();
    let r = edit::write_value(t, name, value, &crate::core::process_env(), &mut said);
    show(said);
    Ok(r?)
}

pub fn run(a: SetArgs) -> Exit {
    let name = a.name.as_str();
    edit::check_set_name(name)?;
    let t = target_for(a.user, a.project.as_deref(), a.file.as_deref())?;
    edit::no_link_in_store(&t)?;
    let Some(text) = &a.to else {
        // Refuse a file the edit cannot follow before asking for anything.
        edit::check_editable(&t, name)?;
        let mut value = read_value_twice(name)?;
        let result = write_value(&t, name, &value);
        value.fill(0);
        result?;
        super::say(format_args!("set {name} in {}", t.file.display()));
        return Ok(0);
    };
    // `--to REF`: the typed value into the backend at REF, then
    // `NAME = { from = "REF" }` into the store's `agentenv.toml`.
    let reference = edit::Reference::new(&t, name, text)?;
    let mut value = read_value_twice(name)?;
    let mut said = Vec::new();
    let env = crate::core::process_env();
    let stored = super::current_dir()
        .and_then(|cwd| Ok(reference.store(&t, &value, &env, &cwd, &mut said)?));
    value.fill(0);
    show(said);
    stored?;
    let toml = reference.toml.display();
    super::say(format_args!("set {name} at {text}, referenced in {toml}"));
    Ok(0)
}

/// The controlling terminal, or the refusal every non-interactive caller
/// (an agent's shell tool, a pipe, CI) gets.
fn open_tty() -> Result<File, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = || {
        Failure::runtime(
            "set: no terminal to read the value from (the value is never taken from arguments, stdin or the environment); \
             run 'agentenv set NAME' yourself in a terminal (an agent cannot pass a value through its context); nothing written",
        )
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags((rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC).bits() as i32)
        .open("/dev/tty")
        .map_err(|_| refuse())?;
    if !rustix::termios::isatty(&f) {
        return Err(refuse());
    }
    Ok(f)
}

fn read_value_twice(name: &str) -> Result<Vec<u8>, Failure> {
    let tty = open_tty()?;
    let mut reader = crate::tty::TtyReader::new(&tty)?;
    reader.name = name.to_string();
    let mut first = reader.read_hidden(&format!("Value for {name}: "))?;
    let mut second = reader.read_hidden(&format!("Again, to confirm {name}: "))?;
    drop(reader);
    let same = first == second;
    second.fill(0);
    if !same {
        first.fill(0);
        return Err(Failure::runtime(format!(
            "set: the two values typed for {name} differ; nothing written"
        )));
    }
    if first.is_empty() {
        return Err(Failure::runtime(format!(
            "set: no value typed for {name}; nothing written"
        )));
    }
    Ok(first)
}

impl From<crate::tty::TtyError> for Failure {
    fn from(e: crate::tty::TtyError) -> Failure {
        Failure {
            code: e.code,
            message: e.message,
        }
    }
}
