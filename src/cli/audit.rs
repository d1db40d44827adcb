//! `agentenv audit [PATH…] [--fix] [--format text|json] [scope flags]
//! [--all-stores]` (docs/audit-set.md#audit-and-set): find the sensitive values the
//! stores hold now, in every form the masker knows, in agent transcripts and
//! shell histories; print `FILE:LINE: NAME (form)` — never a value — and with
//! `--fix` replace each occurrence with `[REDACTED:NAME]` in place
//! ([`crate::audit`]).

use super::session::{ScopeArgs, TextOrJson};
use super::{Exit, Failure};
use crate::audit::report::Report;
use crate::audit::{git, walk, Finder};
use crate::mask::Masker;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
Looks for every sensitive value of the session env would assemble here (values
declared public in agentenv.toml and values under 4 bytes are left out) in
every form the masker knows: raw, each line, base64 (both alphabets, any
offset), hex, percent-encoding, JSON escapes, the export format's quoting.

Default places: ~/.claude/projects, ~/.claude/session-env,
~/.claude/history.jsonl ($CLAUDE_CONFIG_DIR), ~/.codex/sessions,
~/.codex/history.jsonl ($CODEX_HOME), ~/.gemini/tmp, ~/.bash_history,
~/.zsh_history, $XDG_DATA_HOME/fish/fish_history, $HISTFILE, and the MCP
server configurations `agentenv mcp scan` reads (user and this project).
Missing ones are skipped (-v names them); a PATH given that does not exist is
an error (exit 2).

--staged searches what git would commit: the index version of every path that
differs from HEAD (a pre-commit hook: agentenv audit --staged). --repo
searches every file git tracks (the working tree's copy).

Prints FILE:LINE: NAME (form) per occurrence and a summary, never a value.
Exit: 1 when anything was found, 0 when clean, 2 on a usage error.

--fix cannot un-send: a value found in a transcript reached the model
provider. Rotate it. --fix refuses symlinks, files of another user and files
that changed during the scan; in a JSON line it replaces only inside strings.";

#[derive(Debug, clap::Args)]
#[command(after_help = super::examples::after(AFTER_HELP, super::examples::AUDIT))]
pub struct AuditArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Replace each occurrence with [REDACTED:NAME] in place (temp file +
    /// rename, same mode and owner). A leaked value must still be rotated.
    /// The exit status stays 1 when anything was found, even if every
    /// occurrence was replaced: the values leaked.
    #[arg(long = "fix")]
    pub fix: bool,
    /// Output format.
    #[arg(long = "format", value_name = "F", value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// Look for the values of every store `status` lists: the project store
    /// even when not allowed, and the user and system stores' own values
    /// where the project store overrides them.
    #[arg(long = "all-stores")]
    pub all_stores: bool,
    /// Also look for the values of every project store `agentenv allow`
    /// recorded (each as the shell hook loads it: only while it is
    /// unchanged), wherever audit runs.
    #[arg(long = "all-projects")]
    pub all_projects: bool,
    /// Search the git index's version of every path that differs from
    /// HEAD: what the next commit would hold (for a pre-commit hook).
    #[arg(long = "staged", conflicts_with_all = ["paths", "repo", "fix"])]
    pub staged: bool,
    /// Search every file git tracks in the repository of the current
    /// directory (the working tree's copy).
    #[arg(long = "repo", conflicts_with = "paths")]
    pub repo: bool,
    /// Files and directories to search (directories recursively, symlinks
    /// inside them not followed). Default: the agents' transcripts and
    /// session files, the shell histories and the MCP configurations (see
    /// the man page).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// The values to look for (the engine's [`crate::audit::requests`] and
/// [`crate::audit::sensitive_values`]), each run planned and assembled
/// as `env` does, its notes shown.
fn sensitive_values(a: &AuditArgs) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let req = super::session::request(&a.scope, crate::session::CacheMode::Off)?;
    let env = crate::core::process_env();
    let runs = crate::audit::requests(req, a.all_stores, a.all_projects, &env);
    crate::audit::sensitive_values(&runs, |r| {
        Ok(super::session::assemble_shown(&super::session::planned(r)?))
    })
}

/// `--staged`, `--repo`: git's failure is exit 1 with its own text.
impl From<git::Error> for Failure {
    fn from(e: git::Error) -> Failure {
        Failure::runtime(e.to_string())
    }
}

pub fn run(a: AuditArgs) -> Exit {
    let values = sensitive_values(&a)?;
    let masker = Masker::new(values.iter().cloned());
    let defaults = a.paths.is_empty() && !a.staged && !a.repo;
    let paths = if a.repo {
        git::tracked()?
    } else if a.staged {
        Vec::new()
    } else if defaults {
        walk::default_places(&crate::core::process_env(), &super::current_dir()?)
    } else {
        // A path named that does not exist is an error, not "clean".
        let missing: Vec<String> = a
            .paths
            .iter()
            .filter(|p| {
                std::fs::symlink_metadata(p)
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            })
            .map(|p| p.display().to_string())
            .collect();
        if !missing.is_empty() {
            return Err(Failure::usage(format!(
                "audit: {} {} not exist; nothing searched",
                missing.join(", "),
                if missing.len() == 1 { "does" } else { "do" }
            )));
        }
        a.paths.clone()
    };
    if masker.is_empty() {
        crate::warn!(
            "audit: the stores hold no sensitive value of at least {} bytes; nothing to look for",
            crate::mask::MIN_LEN
        );
    }
    let (jobs, notes) = walk::jobs_for(&paths, defaults || a.repo);
    crate::log::notes(&notes);
    let finder = Finder::new(&masker);
    let scans = walk::scan_all(&jobs, &finder, walk::threads());

    let mut report = Report::default();
    let mut notes = Vec::new();
    report.add_scans(&jobs, scans, &finder, a.fix, &mut notes);
    crate::log::notes(&notes);
    if a.staged {
        let staged = git::scan_staged(&finder)?;
        let mut notes = Vec::new();
        report.add_staged(staged, &masker, &mut notes);
        crate::log::notes(&notes);
    }
    let text = report.render(&masker, matches!(a.format, TextOrJson::Json));
    super::write_stdout(text.as_bytes())?;
    Ok(if report.found() { 1 } else { 0 })
}
