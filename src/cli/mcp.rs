//! `agentenv mcp scan` and `agentenv mcp migrate` (docs/mcp.md): find the
//! literal secrets in every client's MCP server configurations, and move
//! the ones a server's `env` carries into a store, the server then started
//! as `agentenv exec --only NAME,… --redact -- CMD ARGS…` ([`crate::mcp`]).

use super::session::{ScopeArgs, TextOrJson};
use super::{Exit, Failure};
use crate::mcp::edit::Change;
use crate::mcp::find::{Finder, Why};
use crate::mcp::{Field, Place, Server};
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

/// One configuration file as read.
struct Read {
    place: Place,
    text: String,
    servers: Vec<Server>,
}

/// Largest configuration file read (`~/.claude.json` grows with history).
const MAX_FILE: u64 = 64 << 20;

/// Read every place that exists; a file that cannot be read or parsed is
/// warned about (file, line; never text) and counted.
fn read_all(places: Vec<Place>, unreadable: &mut u64) -> Vec<Read> {
    let mut out = Vec::new();
    for place in places {
        let bytes = match crate::fsutil::read_regular(&place.path, MAX_FILE) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::debug!("mcp: {} does not exist", place.path.display());
                continue;
            }
            Err(e) => {
                crate::warn!(
                    "mcp: cannot read {}: {}; skipped",
                    place.path.display(),
                    crate::fsutil::io_kind(&e)
                );
                *unreadable += 1;
                continue;
            }
        };
        let Ok(text) = String::from_utf8(bytes) else {
            crate::warn!("mcp: {} is not UTF-8; skipped", place.path.display());
            *unreadable += 1;
            continue;
        };
        match crate::mcp::read(&place, &text) {
            Ok(servers) => out.push(Read {
                place,
                text,
                servers,
            }),
            Err(e) => {
                crate::warn!(
                    "mcp: cannot parse {}: {}; skipped (fix the file, then run again)",
                    place.path.display(),
                    e.0
                );
                *unreadable += 1;
            }
        }
    }
    out
}

/// One finding, as printed.
struct Finding {
    file: PathBuf,
    client: &'static str,
    server: String,
    project: Option<String>,
    label: String,
    field: Field,
    why: Why,
}

impl Finding {
    fn line(&self) -> String {
        format!(
            "{}: {}: {} ({})",
            self.file.display(),
            self.label,
            self.field,
            self.why
        )
    }

    fn json(&self) -> serde_json::Value {
        let (field, key) = match &self.field {
            Field::Env(k) => ("env", serde_json::json!(k)),
            Field::Header(k) => ("header", serde_json::json!(k)),
            Field::Arg(i) => ("args", serde_json::json!(i)),
            Field::Url(k) => ("url", serde_json::json!(k)),
        };
        let mut v = serde_json::json!({
            "file": self.file.to_string_lossy(),
            "client": self.client,
            "server": self.server,
            "field": field,
            "key": key,
            "why": self.why.to_string(),
            "kind": self.why.kind(),
        });
        if let Some(p) = &self.project {
            v["project"] = serde_json::json!(p);
        }
        if let Why::Stored { name, form } = &self.why {
            v["variable"] = serde_json::json!(name);
            v["form"] = serde_json::json!(form);
        }
        v
    }
}

fn findings_of(reads: &[Read], finder: &Finder) -> Vec<(usize, usize, usize, Finding)> {
    let mut out = Vec::new();
    for (ri, r) in reads.iter().enumerate() {
        for (si, s) in r.servers.iter().enumerate() {
            for (li, why) in crate::mcp::find::server_findings(finder, s) {
                out.push((
                    ri,
                    si,
                    li,
                    Finding {
                        file: r.place.path.clone(),
                        client: r.place.client.as_str(),
                        server: s.name.clone(),
                        project: s.project.clone(),
                        label: s.label(),
                        field: s.literals[li].field.clone(),
                        why,
                    },
                ));
            }
        }
    }
    out
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

/// What migrate decided for one file.
#[derive(Default)]
struct Plan {
    changes: Vec<Change>,
    /// (label, env key) moved.
    moved: Vec<(String, String)>,
    /// Lines to print about what is left and why (no value).
    left: Vec<String>,
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

    // Decide, file by file: which env keys move, what is left.
    let mut pending: std::collections::BTreeMap<String, String> = Default::default();
    let mut plans: Vec<Plan> = (0..reads.len()).map(|_| Plan::default()).collect();
    let mut hidden: Vec<(String, Vec<u8>)> = Vec::new();
    let mut i = 0;
    while i < found.len() {
        let (ri, si, _, _) = found[i];
        let mut j = i;
        while j < found.len() && (found[j].0, found[j].1) == (ri, si) {
            j += 1;
        }
        let server = &reads[ri].servers[si];
        let file = reads[ri].place.path.display().to_string();
        let mut names = Vec::new();
        for (_, _, li, f) in &found[i..j] {
            let lit = &server.literals[*li];
            hidden.push((mask_name(&f.field), lit.value.as_bytes().to_vec()));
            let Field::Env(key) = &f.field else {
                plans[ri].left.push(format!(
                    "left {file}: {}: {} ({}): {}",
                    server.label(),
                    f.field,
                    f.why,
                    by_hand(&f.field, &f.why)
                ));
                continue;
            };
            let why_not = if server.command.is_none() {
                Some("a remote server: its env does not reach it; set the value by hand")
            } else if !crate::compat::ident::is_name(key.as_bytes())
                || crate::session::bash_special(key.as_bytes())
            {
                Some("not a name a store can carry; move it by hand")
            } else if lit
                .value
                .bytes()
                .any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
            {
                Some("the value holds a control character; move it by hand")
            } else if held.get(key).is_some_and(|v| v != lit.value.as_bytes())
                || pending.get(key).is_some_and(|v| v != &lit.value)
            {
                Some(
                    "the store already sets this name to another value; rename one of them by hand",
                )
            } else if literal_is_partial(&lit.value) {
                Some("the value mixes a literal with a reference; move it by hand")
            } else {
                None
            };
            match why_not {
                Some(w) => {
                    plans[ri].left.push(format!(
                        "left {file}: {}: {} ({}): {w}",
                        server.label(),
                        f.field,
                        f.why
                    ));
                }
                None => names.push((key.clone(), lit.value.clone())),
            }
        }
        if !names.is_empty() {
            for (k, v) in &names {
                pending.insert(k.clone(), v.clone());
                plans[ri].moved.push((server.label(), k.clone()));
            }
            plans[ri].changes.push(Change {
                path: server.path.clone(),
                names: names.into_iter().map(|(k, _)| k).collect(),
            });
        }
        i = j;
    }
    for (k, v) in &pending {
        hidden.push((k.clone(), v.as_bytes().to_vec()));
    }
    hidden.extend(held.iter().map(|(k, v)| (k.clone(), v.clone())));
    let diff_masker = crate::mask::Masker::new(hidden);

    // Every new text first: nothing is written unless every file can be.
    let mut outputs: Vec<(usize, String)> = Vec::new();
    for (ri, plan) in plans.iter().enumerate() {
        if plan.changes.is_empty() {
            continue;
        }
        let r = &reads[ri];
        let new = crate::mcp::edit::rewrite(&r.place, &r.text, &plan.changes).map_err(|e| {
            Failure::runtime(format!(
                "mcp migrate: cannot edit {}: {e}; nothing changed",
                r.place.path.display()
            ))
        })?;
        // The result must read back, with the moved keys gone.
        let again = crate::mcp::read(&r.place, &new).map_err(|e| {
            Failure::runtime(format!(
                "mcp migrate: the edit of {} would not parse ({}); nothing changed",
                r.place.path.display(),
                e.0
            ))
        })?;
        for c in &plan.changes {
            let s = again.iter().find(|s| s.path == c.path);
            let still = s.is_some_and(|s| {
                s.literals
                    .iter()
                    .any(|l| matches!(&l.field, Field::Env(k) if c.names.contains(k)))
            });
            if still {
                return Err(Failure::runtime(format!(
                    "mcp migrate: the edit of {} left a moved key in place; nothing changed",
                    r.place.path.display()
                )));
            }
        }
        outputs.push((ri, new));
    }

    let mut out = String::new();
    if a.dry_run {
        for (ri, new) in &outputs {
            out.push_str(&diff(&reads[*ri], &plans[*ri].changes, new, &diff_masker));
        }
    } else {
        for (ri, _) in &outputs {
            refuse_unsafe(&reads[*ri].place.path)?;
        }
        // The values into the store first; the configurations after, so a
        // failure leaves every server as it was.
        for (k, v) in &pending {
            if held.get(k).map(Vec::as_slice) != Some(v.as_bytes()) {
                dest.put(k, v.as_bytes())?;
            }
        }
        let backups = backup_dir(a.scope.agents_dir.as_deref())?;
        for (ri, new) in &outputs {
            let r = &reads[*ri];
            let b = backup(&backups, &r.place.path, &r.text)?;
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

/// A value that is part literal, part reference (`Bearer ${X}` style in
/// env): moving it whole would move the reference too.
fn literal_is_partial(v: &str) -> bool {
    crate::mcp::find::literal_part(v) != v
}

/// A name for a literal in the masked diff: the env key, or the field.
fn mask_name(f: &Field) -> String {
    match f {
        Field::Env(k) => k.clone(),
        other => other.to_string().replace(' ', "_"),
    }
}

/// What to change by hand for a literal the environment cannot carry.
fn by_hand(f: &Field, why: &Why) -> &'static str {
    if matches!(why, Why::UrlPassword | Why::UrlQuery(_)) {
        return by_hand(&Field::Url(String::new()), &Why::SecretName);
    }
    match f {
        Field::Header(_) => {
            "move the value into a store (agentenv set NAME) and use the client's reference syntax in the header (${NAME}, {env:NAME}), or its headers helper"
        }
        Field::Arg(_) => {
            "move the value into a store (agentenv set NAME) and let the server read it from its environment (most servers take an env variable instead of the flag)"
        }
        Field::Url(_) => {
            "move the credential out of the URL into a header or the environment, its value into a store (agentenv set NAME)"
        }
        Field::Env(_) => "move it by hand",
    }
}

/// A configuration `migrate` may replace: a regular file we own, not a
/// symlink (a project's link could point anywhere).
fn refuse_unsafe(p: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::symlink_metadata(p).map_err(|e| {
        Failure::runtime(format!(
            "mcp migrate: cannot read {}: {}; nothing changed",
            p.display(),
            crate::fsutil::io_kind(&e)
        ))
    })?;
    if md.file_type().is_symlink() {
        return Err(Failure::runtime(format!(
            "mcp migrate: {} is a symbolic link; edit the file it points to by its own path (migrate --project with that directory); nothing changed",
            p.display()
        )));
    }
    if !md.is_file() {
        return Err(Failure::runtime(format!(
            "mcp migrate: {} is not a regular file; nothing changed",
            p.display()
        )));
    }
    if md.uid() != rustix::process::geteuid().as_raw() {
        return Err(Failure::runtime(format!(
            "mcp migrate: {} belongs to another user; nothing changed",
            p.display()
        )));
    }
    Ok(())
}

/// `<user store>/.backup/mcp/<seconds>-<pid>`, 0700 (the user store:
/// `--agents-dir`, else `$AGENTS_HOME`, else `~/.agents`).
fn backup_dir(agents_dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let env = crate::core::process_env();
    let store = match agents_dir {
        Some(d) => super::current_dir()?.join(d),
        None => crate::session::user_store(&env).map_err(|e| {
            Failure::runtime(format!(
                "mcp migrate: cannot find the user store for the backup: {e}"
            ))
        })?,
    };
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dir = store
        .join(".backup/mcp")
        .join(format!("{secs}-{}", std::process::id()));
    let mk = |d: &Path| -> Result<(), Failure> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(d)
            .map_err(|e| {
                Failure::runtime(format!(
                    "mcp migrate: cannot create the backup directory {}: {}; nothing changed",
                    d.display(),
                    crate::fsutil::io_kind(&e)
                ))
            })
    };
    mk(&dir)?;
    Ok(dir)
}

/// Write the old text as a 0600 file in `dir`; its path.
fn backup(dir: &Path, original: &Path, text: &str) -> Result<PathBuf, Failure> {
    let name: String = original
        .to_string_lossy()
        .trim_start_matches('/')
        .replace('/', "%");
    let p = dir.join(name);
    super::write_file(
        &p,
        text.as_bytes(),
        crate::fsutil::Mode::Exactly(0o600),
        false,
        |p, kind| {
            format!("mcp migrate: cannot write the backup {p}: {kind}; the file is unchanged")
        },
    )?;
    Ok(p)
}

/// A unified diff of one file's changes, one hunk per changed server,
/// every value masked.
fn diff(r: &Read, changes: &[Change], _new: &str, masker: &crate::mask::Masker) -> String {
    let old: Vec<&str> = r.text.split_inclusive('\n').collect();
    // (first changed line, lines removed, lines added)
    let mut hunks: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    for c in changes {
        let Ok(one) = crate::mcp::edit::rewrite(&r.place, &r.text, std::slice::from_ref(c)) else {
            continue;
        };
        let new: Vec<&str> = one.split_inclusive('\n').collect();
        let pre = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let post = old[pre..]
            .iter()
            .rev()
            .zip(new[pre..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let minus: Vec<String> = old[pre..old.len() - post]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let plus: Vec<String> = new[pre..new.len() - post]
            .iter()
            .map(|s| s.to_string())
            .collect();
        hunks.push((pre, minus, plus));
    }
    hunks.sort_by_key(|h| h.0);
    let path = r.place.path.display();
    let mut s = format!("--- {path}\n+++ {path} (migrated)\n");
    let mut delta: isize = 0;
    const CTX: usize = 3;
    for (pre, minus, plus) in &hunks {
        let from = pre.saturating_sub(CTX);
        let to = (pre + minus.len() + CTX).min(old.len());
        let old_len = to - from;
        let new_len = old_len - minus.len() + plus.len();
        let new_from = (from as isize + delta) as usize;
        s.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            from + 1,
            old_len,
            new_from + 1,
            new_len
        ));
        let line = |s: &mut String, mark: char, l: &str| {
            s.push(mark);
            s.push_str(l);
            if !l.ends_with('\n') {
                s.push_str("\n\\ No newline at end of file\n");
            }
        };
        for l in &old[from..*pre] {
            line(&mut s, ' ', l);
        }
        for (mark, l) in middle(minus, plus) {
            line(&mut s, mark, l);
        }
        for l in &old[pre + minus.len()..to] {
            line(&mut s, ' ', l);
        }
        delta += plus.len() as isize - minus.len() as isize;
    }
    String::from_utf8_lossy(&masker.mask(s.as_bytes())).into_owned()
}

/// The lines of a hunk's changed middle in diff order: a longest common
/// subsequence kept as context, the rest removed or added (the middle is
/// one server: small).
fn middle<'a>(minus: &'a [String], plus: &'a [String]) -> Vec<(char, &'a str)> {
    let (n, m) = (minus.len(), plus.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if minus[i] == plus[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n || j < m {
        if i < n && j < m && minus[i] == plus[j] {
            out.push((' ', minus[i].as_str()));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(('-', minus[i].as_str()));
            i += 1;
        } else {
            out.push(('+', plus[j].as_str()));
            j += 1;
        }
    }
    out
}
