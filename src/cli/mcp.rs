//! `agentenv mcp scan` and `agentenv mcp migrate` (docs/mcp.md): find the
//! literal secrets in every client's MCP server configurations, and move
//! the ones a server's `env` carries into a store, the server then started
//! as `agentenv exec --only NAME,… --redact -- CMD ARGS…` ([`crate::mcp`]).

use super::session::{ScopeArgs, TextOrJson};
use super::{Exit, Failure};
use crate::mcp::find::Finder;
use crate::mcp::migrate::{self, findings_of, read_all};
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
    let cwd = super::current_dir()?;
    match given {
        Some(d) => {
            let d = cwd.join(d);
            if !d.is_dir() {
                return Err(Failure::usage(format!(
                    "mcp: {} is not a directory",
                    d.display()
                )));
            }
            Ok(std::fs::canonicalize(&d).unwrap_or(d))
        }
        None => {
            let env = crate::core::process_env();
            let home = crate::core::get(&env, "HOME").map(PathBuf::from);
            Ok(crate::mcp::project_of(&cwd, home.as_deref()))
        }
    }
}

pub fn run_scan(a: ScanArgs) -> Exit {
    let project = project_dir(a.project.as_deref())?;
    let values = store_values(&a.scope, &project)?;
    let masker = crate::mask::Masker::new(values);
    let finder = Finder::new(&masker);
    let places = crate::mcp::places(&crate::core::process_env(), Some(&project));
    let mut unreadable = 0;
    let reads = read_all(places, &mut unreadable);
    let found = findings_of(&reads, &finder);
    let servers: usize = reads.iter().map(|r| r.servers.len()).sum();
    let mut with: Vec<(usize, usize)> = found.iter().map(|f| (f.0, f.1)).collect();
    with.dedup();
    let text = match a.format {
        TextOrJson::Text => {
            let mut s = String::new();
            for (_, _, _, f) in &found {
                s.push_str(&f.line());
                s.push('\n');
            }
            s.push_str(&format!(
                "mcp scan: {} in {} of {} ({} read, project {})\n",
                plural(found.len(), "literal secret", "literal secrets"),
                plural(with.len(), "server", "servers"),
                plural(servers, "server", "servers"),
                plural(reads.len(), "file", "files"),
                project.display()
            ));
            if !found.is_empty() {
                s.push_str("mcp scan: move them into a store: agentenv mcp migrate --dry-run\n");
            }
            crate::log::escape_controls(&s, true).into_owned()
        }
        TextOrJson::Json => {
            let v = serde_json::json!({
                "findings": found.iter().map(|f| f.3.json()).collect::<Vec<_>>(),
                "summary": {
                    "findings": found.len(),
                    "servers_with_findings": with.len(),
                    "servers": servers,
                    "files": reads.iter().map(|r| r.place.path.to_string_lossy()).collect::<Vec<_>>(),
                    "files_unreadable": unreadable,
                    "project": project.to_string_lossy(),
                },
            });
            let mut s = serde_json::to_string_pretty(&v).expect("JSON of strings");
            s.push('\n');
            s
        }
    };
    super::write_stdout(text.as_bytes())?;
    Ok(if found.is_empty() { 0 } else { 1 })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Where a moved value goes. Today a store file; a secret reference
/// (a keychain or vault entry, planned) is the other destination this seam is for: it would write
/// the reference into the store instead of the value, and the server's
/// rewrite stays the same.
enum Destination {
    Store(super::set::Target),
}

impl Destination {
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
    let masker = crate::mask::Masker::new(held.iter().map(|(k, v)| (k.clone(), v.clone())));
    let finder = Finder::new(&masker);
    let places = crate::mcp::places(&crate::core::process_env(), Some(&project));
    let mut unreadable = 0;
    let reads = read_all(places, &mut unreadable);
    let found = findings_of(&reads, &finder);

    let d = migrate::decide(&reads, &found, &held);
    let (plans, pending, diff_masker) = (d.plans, d.pending, d.diff_masker);
    let outputs = migrate::rewrites(&reads, &plans).map_err(Failure::runtime)?;

    let mut out = String::new();
    if a.dry_run {
        for (ri, new) in &outputs {
            out.push_str(&migrate::diff(
                &reads[*ri],
                &plans[*ri].changes,
                new,
                &diff_masker,
            ));
        }
    } else {
        for (ri, _) in &outputs {
            migrate::refuse_unsafe(&reads[*ri].place.path).map_err(Failure::runtime)?;
        }
        // The values into the store first; the configurations after, so a
        // failure leaves every server as it was.
        for (k, v) in &pending {
            if held.get(k).map(Vec::as_slice) != Some(v.as_bytes()) {
                dest.put(k, v.as_bytes())?;
            }
        }
        let agents_dir = match &a.scope.agents_dir {
            Some(d) => Some(super::current_dir()?.join(d)),
            None => None,
        };
        let backups = migrate::backup_dir(agents_dir).map_err(Failure::runtime)?;
        for (ri, new) in &outputs {
            let r = &reads[*ri];
            let b = migrate::backup(&backups, &r.place.path, &r.text).map_err(Failure::runtime)?;
            super::write_file(
                &r.place.path,
                new.as_bytes(),
                crate::fsutil::Mode::KeepOrUmask,
                false,
                |p, kind| {
                    format!("mcp migrate: cannot write {p}: {kind}; the values are in the store, the file is unchanged")
                },
            )?;
            out.push_str(&format!(
                "backup {}: {} (it holds the old values: delete it once the servers work)\n",
                r.place.path.display(),
                b.display()
            ));
        }
    }
    let verb = if a.dry_run { "would move" } else { "moved" };
    for (ri, plan) in plans.iter().enumerate() {
        for (label, key) in &plan.moved {
            out.push_str(&format!(
                "{verb} {}: {label}: env {key} -> {}\n",
                reads[ri].place.path.display(),
                dest.describe()
            ));
        }
    }
    let mut left = 0;
    for plan in &plans {
        for l in &plan.left {
            out.push_str(l);
            out.push('\n');
            left += 1;
        }
    }
    let moved: usize = plans.iter().map(|p| p.moved.len()).sum();
    out.push_str(&format!(
        "mcp migrate: {} {verb} in {}; {} left to change by hand{}\n",
        plural(moved, "value", "values"),
        plural(outputs.len(), "file", "files"),
        left,
        if a.dry_run {
            " (dry run: nothing changed)"
        } else {
            ""
        }
    ));
    // Control bytes escaped (a path or a diff line cannot drive the
    // terminal), tabs kept (a diff of a tab-indented file).
    let text: Vec<String> = out
        .split('\t')
        .map(|s| crate::log::escape_controls(s, true).into_owned())
        .collect();
    super::write_stdout(text.join("\t").as_bytes())?;
    Ok(if left == 0 { 0 } else { 1 })
}
