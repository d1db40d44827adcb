//! `agentenv import --to SCHEME:… [--user | --project DIR] [NAME…]`
//! (docs/team-secrets.md): plain values of a store's env files moved
//! into a backend and replaced by references in the store's
//! `agentenv.toml`. Values are never printed: names and files only.

use super::set::{show, target_for};
use super::Exit;
use crate::session::import;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
--to names where the values go; each variable's reference is made from it:
  vault://MOUNT/PATH   -> vault://MOUNT/PATH#NAME (one field per variable)
  vault://MOUNT/PATH#F -> as given (one NAME only)
  age:FILE             -> age:FILE#NAME (FILE in the store, re-encrypted to
                          FILE.recipients)
  pass:PATH            -> pass:PATH/NAME
  keychain:SERVICE     -> keychain:SERVICE/NAME
Without NAME, every variable the store's env files assign. Each value is
stored in the backend first, then NAME = { from = \"REF\" } is written into
agentenv.toml, then NAME's assignment is removed from its env file (0600,
temp file + rename, every other line kept byte for byte). A project store
that was allowed and otherwise unchanged stays allowed.

Examples:
  # Move GH_TOKEN from .agents/local.env into OpenBao (field GH_TOKEN)
  agentenv import --to vault://secret/myproj GH_TOKEN
  # Every value of the user store into an age file for the team
  agentenv import --to age:secrets.age --user";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ImportArgs {
    /// Where the values go: vault://MOUNT/PATH, age:FILE, pass:PATH,
    /// keychain:SERVICE.
    #[arg(long = "to", value_name = "SCHEME:…")]
    pub to: String,
    /// Import from the user store ($AGENTS_HOME, else ~/.agents).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Import from DIR/.agents (default: the nearest project store upwards).
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Say what would move; write nothing, contact no backend.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// The variables to move (default: every one the env files assign).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
}

pub fn run(a: ImportArgs) -> Exit {
    // Refuse a bad NAME or --to before reading anything.
    import::check(&a.names, &a.to)?;
    let t = target_for(a.user, a.project.as_deref(), None)?;
    let base = crate::core::process_env();
    let moves = import::moves(&t, &a.names, &a.to, &base)?;
    if moves.is_empty() {
        let store = t.store.display();
        super::say(format_args!("import: nothing to move in {store}"));
        return Ok(0);
    }
    let (toml, after) = import::references(&t, &moves)?;
    if a.dry_run {
        for m in &moves {
            super::say(format_args!("would move {m}"));
        }
        return Ok(0);
    }
    let cwd = super::current_dir()?;
    let mut said = Vec::new();
    let r = import::apply(&t, &moves, &toml, &after, &base, &cwd, &mut said);
    show(said);
    r?;
    for m in &moves {
        let toml = toml.display();
        super::say(format_args!("moved {m}, referenced in {toml}"));
    }
    Ok(0)
}
