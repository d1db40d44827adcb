//! `agentenv mcp scan` and `agentenv mcp migrate` (docs/mcp.md): find the
//! literal secrets in every client's MCP server configurations, and move
//! the ones a server's `env` carries into a store, the server then started
//! as `agentenv exec --only NAME,… --redact -- CMD ARGS…` ([`crate::mcp`]).

use super::session::{ScopeArgs, TextOrJson};
use super::{Exit, Failure};
use crate::mcp::jobs::{self, Failed};
use std::path::{Path, PathBuf};

const SCAN_HELP: &str = "\
Reads the MCP server configurations of Claude Code (~/.claude.json, its
projects' mcpServers, .mcp.json), Codex (~/.codex/config.toml,
.codex/config.toml), Gemini CLI (~/.gemini/settings.json,
.gemini/settings.json), Cursor (~/.cursor/mcp.json, .cursor/mcp.json), VS Code
(~/.config/Code/User/mcp.json, .vscode/mcp.json) and OpenCode
(~/.config/opencode/opencode.json, opencode.json). The project is --project
DIR, else the nearest directory upwards holding .git, .agents or one of these
files.

A finding is a literal in a server's env, headers, args or URL that is a value
the stores hold (in any form the masker knows), a known token shape (ghp_,
github_pat_, sk-, sk-ant-, xoxb-, AKIA, AIza, glpat-, …), a password or secret
parameter in a URL, or a credential-like literal under a secret's name
(API_KEY, Authorization, --token). References (${VAR}, {env:VAR},
${env:VAR}, ${input:…}, op://…) and placeholders (<your-token>, xxx…) are not.

Prints FILE: server NAME: env KEY (why) per finding, never a value.
Exit: 1 when anything was found, 0 when clean, 2 on a usage error.";

const MIGRATE_HELP: &str = "\
Every configuration scan reads is migrated: each literal secret of a local
server's env goes into the store (--user, the default: ~/.agents/env;
--project DIR: DIR/.agents/local.env; 0600, temp file + rename, as `agentenv
set` writes), the key leaves the server's env, and the server starts as

  agentenv exec --only NAME,… --redact -- CMD ARGS…

so it gets its own variables and no other sensitive one, and its output is
masked. A literal in args, headers or a URL, which the environment cannot
carry, is reported with what to change by hand and left as it is. A name the
store already sets to another value is left too.

Each file is backed up first (0600, under the user store's .backup/mcp; the
backup holds the old values: delete it once the servers work) and edited in
place, byte-exact outside the changed servers; a symlinked configuration is
refused. --dry-run prints the diff (values masked) and changes nothing. A
second run changes nothing. Values are never printed.
Exit: 0 when nothing is left, 1 when a literal is left to change by hand.";

#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// List the literal secrets in every client's MCP server configurations.
    #[command(after_help = super::examples::after(SCAN_HELP, super::examples::MCP_SCAN))]
    Scan(ScanArgs),
    /// Move the literal secrets of MCP servers' env into a store; wrap each server in agentenv exec --only.
    #[command(after_help = super::examples::after(MIGRATE_HELP, super::examples::MCP_MIGRATE))]
    Migrate(MigrateArgs),
}

#[derive(Debug, clap::Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Output format.
    #[arg(long = "format", value_name = "F", value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// The project whose configurations to read (default: the nearest
    /// directory upwards holding .git, .agents or an MCP configuration).
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct MigrateArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Print the diff of every file (values masked); change nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Move the values into the user store's env file (the default).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Move the values into DIR/.agents/local.env; DIR is also the project
    /// whose configurations are read.
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
}

pub fn run(c: McpCommand) -> Exit {
    match c {
        McpCommand::Scan(a) => run_scan(a),
        McpCommand::Migrate(a) => run_migrate(a),
    }
}

/// The stores' values to look for: the values the masker masks
/// ([`crate::session::Session::values_to_mask`]: from 8 bytes, never a
/// number or a boolean word, from 4 bytes when declared `sensitive =
/// true`) of the session `exec` would assemble in the project — so a
/// store's `DEBUG=true` does not make every `true` a finding.
fn store_values(scope: &ScopeArgs, project: &Path) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let mut req = super::session::request(scope, crate::session::CacheMode::Off)?;
    req.options.cwd = Some(project.to_path_buf());
    let session = super::session::assemble_shown(&super::session::planned(&req)?);
    Ok(session.values_to_mask())
}

/// The project directory: `--project DIR`, else the one `cwd` is in.
fn project_dir(given: Option<&Path>) -> Result<PathBuf, Failure> {
    jobs::project_dir(&super::current_dir()?, given).map_err(Failure::usage)
}

pub fn run_scan(a: ScanArgs) -> Exit {
    let project = project_dir(a.project.as_deref())?;
    let values = store_values(&a.scope, &project)?;
    let (text, status) = jobs::scan(&project, values, a.format == TextOrJson::Json);
    super::write_stdout(text.as_bytes())?;
    Ok(status)
}

/// Where a moved value goes: a store file, through `set`'s writer.
enum Destination {
    Store(super::set::Target),
}

impl From<Failed> for Failure {
    fn from(f: Failed) -> Failure {
        Failure::runtime(f.0)
    }
}

impl jobs::Destination for Destination {
    type Error = Failure;

    fn describe(&self) -> String {
        match self {
            Destination::Store(t) => t.file.display().to_string(),
        }
    }

    fn put(&self, name: &str, value: &[u8]) -> Result<(), Failure> {
        match self {
            Destination::Store(t) => super::set::write_value(t, name, value),
        }
    }
}

pub fn run_migrate(a: MigrateArgs) -> Exit {
    let project = project_dir(a.project.as_deref())?;
    let dest = Destination::Store(match (&a.project, &a.scope.agents_dir) {
        (None, Some(dir)) => super::set::Target::user_at(super::current_dir()?.join(dir)),
        _ => super::set::target_for(
            a.project.is_none(),
            a.project.is_some().then_some(project.as_path()),
            None,
        )?,
    });
    // What the stores hold now, by name (for conflicts) and as needles.
    let held: std::collections::BTreeMap<String, Vec<u8>> =
        store_values(&a.scope, &project)?.into_iter().collect();
    let agents_dir = match &a.scope.agents_dir {
        Some(d) => Some(super::current_dir()?.join(d)),
        None => None,
    };
    let (text, status) = jobs::migrate(&project, &held, &dest, a.dry_run, agents_dir)?;
    super::write_stdout(text.as_bytes())?;
    Ok(status)
}
