//! `agentenv audit [PATH…] [--fix] [--format text|json] [scope flags]
//! [--all-stores]` (docs/audit-set.md#audit-and-set): find the sensitive values the
//! stores hold now, in every form the masker knows, in agent transcripts and
//! shell histories; print `FILE:LINE: NAME (form)` — never a value — and with
//! `--fix` replace each occurrence with `[REDACTED:NAME]` in place
//! ([`crate::audit`]).

use super::session::{ScopeArgs, TextOrJson};
use super::{Exit, Failure};
use crate::audit::{FixRefused, Fixed, Scan, ScanError};
use crate::mask::Masker;
use std::path::{Path, PathBuf};

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

/// The default places, in order: what Claude Code, Codex and Gemini CLI
/// keep (the client table's `transcripts`), then the shell histories.
/// `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` move the first two; fish's history follows `$XDG_DATA_HOME`; `$HISTFILE`
/// is added when set.
pub fn default_paths(env: &crate::core::Env) -> Vec<PathBuf> {
    let abs = |k: &str| {
        crate::core::get(env, k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let Some(home) = abs("HOME") else {
        return Vec::new();
    };
    let data = abs("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
    // A client's directory variable relative to where audit runs, as the
    // client (and `init`) would take it.
    let cwd = std::env::current_dir().unwrap_or_else(|_| home.clone());
    let mut out = Vec::new();
    for &client in crate::agent::client::Client::ALL {
        if let Some(dir) = client.user_dir(env, &cwd) {
            out.extend(client.facts().transcripts.iter().map(|t| dir.join(t)));
        }
    }
    out.extend([
        home.join(".bash_history"),
        home.join(".zsh_history"),
        data.join("fish/fish_history"),
    ]);
    if let Some(h) = abs("HISTFILE") {
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

/// One file to scan: its path and whether the path itself may be a
/// symlink (named by the user or a default place).
struct Job {
    path: PathBuf,
    follow: bool,
}

/// Walk `root` (a directory) without following symlinks, in name order;
/// regular files become jobs. Unreadable directories are warned about.
fn walk(root: &Path, jobs: &mut Vec<Job>) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                crate::warn!(
                    "audit: cannot read the directory {}: {}",
                    dir.display(),
                    crate::fsutil::io_kind(&e)
                );
                continue;
            }
        };
        let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| Some((e.file_name(), e.file_type().ok()?)))
            .collect();
        entries.sort_by(|a, b| {
            use std::os::unix::ffi::OsStrExt;
            a.0.as_bytes().cmp(b.0.as_bytes())
        });
        let mut subdirs = Vec::new();
        for (name, ft) in entries {
            let p = dir.join(&name);
            if ft.is_symlink() {
                crate::info!("audit: not following the symlink {}", p.display());
            } else if ft.is_dir() {
                subdirs.push(p);
            } else if ft.is_file() {
                jobs.push(Job {
                    path: p,
                    follow: false,
                });
            }
        }
        // Depth first, in name order.
        stack.extend(subdirs.into_iter().rev());
    }
}

/// The jobs of the paths given (or the default places).
fn jobs_for(paths: &[PathBuf], defaults: bool) -> Vec<Job> {
    let mut jobs = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if defaults {
                    crate::info!("audit: {} does not exist; skipped", p.display());
                } else {
                    crate::warn!("audit: {} does not exist; skipped", p.display());
                }
            }
            Err(e) => crate::warn!(
                "audit: cannot read {}: {}; skipped",
                p.display(),
                crate::fsutil::io_kind(&e)
            ),
            Ok(md) if md.is_dir() => walk(p, &mut jobs),
            Ok(md) if md.is_file() => jobs.push(Job {
                path: p.clone(),
                follow: true,
            }),
            Ok(_) => crate::warn!("audit: {} is not a regular file; skipped", p.display()),
        }
    }
    jobs
}

/// Scan every job on up to `threads` threads; results in job order.
fn scan_all(
    jobs: &[Job],
    finder: &crate::audit::Finder,
    threads: usize,
) -> Vec<Result<Scan, ScanError>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Scan, ScanError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(job) = jobs.get(i) else {
            return;
        };
        let r = crate::audit::scan_file(&job.path, job.follow, finder);
        results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
    };
    let threads = threads.clamp(1, jobs.len().max(1));
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// Whether the first request walks no project (`-g`).
fn req_global(runs: &[crate::session::Request]) -> bool {
    runs.first().is_none_or(|r| r.options.global)
}

/// The sensitive values to look for: the session as `env` assembles it
/// (the trust gate as `--require-trust` says), or with `--all-stores` the
/// union of the ungated session and the user/system stores alone.
fn sensitive_values(a: &AuditArgs) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let req = super::session::request(&a.scope, crate::session::CacheMode::Off)?;
    let mut runs = Vec::new();
    if a.all_stores {
        let ungated = crate::session::Request {
            root: crate::session::RootRule::Ungated,
            ..req
        };
        if !ungated.options.global {
            let mut g = ungated.clone();
            g.options.global = true;
            runs.push(ungated);
            runs.push(g);
        } else {
            runs.push(ungated);
        }
    } else {
        runs.push(req);
    }
    if a.all_projects && !req_global(&runs) {
        let env = crate::core::process_env();
        let state = crate::session::trust::state_dir(&env).ok();
        let base = runs[0].clone();
        for store in state
            .map(|s| crate::session::trust::allowed_stores(&s))
            .unwrap_or_default()
        {
            let Some(root) = store.parent().filter(|_| store.is_dir()) else {
                continue;
            };
            let mut r = base.clone();
            r.root = crate::session::RootRule::WalkUp;
            r.options.cwd = Some(root.to_path_buf());
            r.options.project_root = None;
            runs.push(r);
        }
    }
    let mut all: Vec<(String, Vec<u8>)> = Vec::new();
    for r in runs {
        let session = super::session::assemble_shown(&super::session::planned(&r)?);
        for pair in session.values_to_mask() {
            if !all.contains(&pair) {
                all.push(pair);
            }
        }
    }
    Ok(all)
}

pub fn run(a: AuditArgs) -> Exit {
    let values = sensitive_values(&a)?;
    let masker = Masker::new(values.iter().cloned());
    let names: std::collections::BTreeSet<&str> =
        masker.needles().iter().map(|n| n.name.as_str()).collect();
    let defaults = a.paths.is_empty() && !a.staged && !a.repo;
    let paths = if a.repo {
        git::tracked()?
    } else if a.staged {
        Vec::new()
    } else if defaults {
        let env = crate::core::process_env();
        let mut p = default_paths(&env);
        let cwd = super::current_dir()?;
        let home = crate::core::get(&env, "HOME").map(PathBuf::from);
        let project = crate::mcp::project_of(&cwd, home.as_deref());
        for place in crate::mcp::places(&env, Some(&project)) {
            if !p.contains(&place.path) {
                p.push(place.path);
            }
        }
        p
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
    let jobs = jobs_for(&paths, defaults || a.repo);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    let finder = crate::audit::Finder::new(&masker);
    let scans = scan_all(&jobs, &finder, threads);

    let mut report = Report::default();
    for (job, r) in jobs.iter().zip(scans) {
        match r {
            Ok(scan) => {
                report.record(&job.path, &scan.findings, scan.bytes, &masker);
                if a.fix && !scan.findings.is_empty() {
                    let outcome = if scan.changed {
                        Err(FixRefused::Changed)
                    } else {
                        crate::audit::fix_file(&job.path, &finder, &scan.stamp)
                    };
                    report.fixes.push((job.path.clone(), outcome));
                }
            }
            Err(e) => {
                crate::warn!("audit: cannot read {}: {e}; skipped", job.path.display());
                report.unreadable += 1;
            }
        }
    }
    if a.staged {
        for (path, scanned) in git::scan_staged(&finder)? {
            match scanned {
                Ok((findings, bytes)) => report.record(&path, &findings, bytes, &masker),
                Err(why) => {
                    crate::warn!(
                        "audit: cannot read the staged {}: {why}; skipped",
                        path.display()
                    );
                    report.unreadable += 1;
                }
            }
        }
    }
    let found_names: std::collections::BTreeSet<String> =
        report.findings.iter().map(|l| l.name.clone()).collect();
    let text = match a.format {
        TextOrJson::Text => report.text(names.len(), masker.needles().len(), &found_names),
        TextOrJson::Json => report.json(names.len(), masker.needles().len(), &found_names),
    };
    super::write_stdout(text.as_bytes())?;
    Ok(if report.findings.is_empty() { 0 } else { 1 })
}

/// One finding, as printed.
struct Line {
    file: PathBuf,
    line: u64,
    name: String,
    form: &'static str,
}

#[derive(Default)]
struct Report {
    findings: Vec<Line>,
    fixes: Vec<(PathBuf, Result<Fixed, FixRefused>)>,
    files: u64,
    files_found: u64,
    unreadable: u64,
    bytes: u64,
}

/// A path for the text report, its control bytes escaped (`log::escape_controls`).
fn escaped(p: &std::path::Path) -> String {
    crate::log::escape_controls(&p.to_string_lossy(), false).into_owned()
}

impl Report {
    /// Count one file read and each of its findings.
    fn record(
        &mut self,
        file: &Path,
        findings: &[crate::audit::Finding],
        bytes: u64,
        masker: &Masker,
    ) {
        self.files += 1;
        self.bytes += bytes;
        if !findings.is_empty() {
            self.files_found += 1;
        }
        for f in findings {
            let n = &masker.needles()[f.needle];
            self.findings.push(Line {
                file: file.to_path_buf(),
                line: f.line,
                name: n.name.clone(),
                form: n.form.as_str(),
            });
        }
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

const ROTATE: &str = "a value found here has leaked: rotate it; --fix does not un-send it";

/// Where a finding's file is, for the rotate reminder: what the place
/// means for the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Transcript,
    History,
    Other,
}

impl Place {
    fn of(file: &Path, env: &crate::core::Env) -> Place {
        let defaults = default_paths(env);
        let home = crate::core::get(env, "HOME").map(PathBuf::from);
        let data = crate::core::get(env, "XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".local/share")));
        let mut histories: Vec<PathBuf> = Vec::new();
        if let Some(h) = &home {
            histories.extend([h.join(".bash_history"), h.join(".zsh_history")]);
        }
        if let Some(d) = data {
            histories.push(d.join("fish/fish_history"));
        }
        if let Some(h) = crate::core::get(env, "HISTFILE").filter(|v| !v.is_empty()) {
            histories.push(PathBuf::from(h));
        }
        if histories.iter().any(|h| h == file) {
            return Place::History;
        }
        if defaults
            .iter()
            .filter(|d| !histories.contains(d))
            .any(|d| file.starts_with(d))
        {
            return Place::Transcript;
        }
        Place::Other
    }

    fn key(self) -> &'static str {
        match self {
            Place::Transcript => "transcript",
            Place::History => "shell_history",
            Place::Other => "other_file",
        }
    }

    fn says(self) -> &'static str {
        match self {
            Place::Transcript => {
                "found in an agent's transcript, so sent to the model provider (and anywhere \
                 the transcript was synced); rotate it, --fix does not un-send it"
            }
            Place::History => {
                "found in a shell history (on this disk, and in any backup or sync of it); rotate it"
            }
            Place::Other => {
                "found in another file; rotate it if the file ever left this machine (a commit, \
                 a sync, a backup)"
            }
        }
    }
}

/// The names found, by the kind of place they were found in.
fn by_place(
    findings: &[Line],
) -> std::collections::BTreeMap<Place, std::collections::BTreeSet<String>> {
    let env = crate::core::process_env();
    let mut out: std::collections::BTreeMap<Place, std::collections::BTreeSet<String>> =
        Default::default();
    let mut cache: Vec<(PathBuf, Place)> = Vec::new();
    for l in findings {
        let place = match cache.iter().find(|(p, _)| *p == l.file) {
            Some((_, k)) => *k,
            None => {
                let k = Place::of(&l.file, &env);
                cache.push((l.file.clone(), k));
                k
            }
        };
        out.entry(place).or_default().insert(l.name.clone());
    }
    out
}

impl Report {
    fn text(
        &self,
        values: usize,
        needles: usize,
        found: &std::collections::BTreeSet<String>,
    ) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for l in &self.findings {
            let _ = writeln!(
                s,
                "{}:{}: {} ({})",
                escaped(&l.file),
                l.line,
                l.name,
                l.form
            );
        }
        for (p, r) in &self.fixes {
            // A hostile file name drives no terminal (ESC, BEL, CR).
            let p = escaped(p);
            match r {
                Ok(f) => {
                    let _ = write!(
                        s,
                        "fixed {p}: {} replaced",
                        plural(f.replaced, "occurrence", "occurrences")
                    );
                    if f.left > 0 {
                        let _ = write!(
                            s,
                            ", {} left (not inside one JSON string; edit by hand)",
                            f.left
                        );
                    }
                    if f.other_links > 0 && f.replaced > 0 {
                        let _ = write!(
                            s,
                            "; {} of the old file {} the old content (find them: find / -xdev -inum {})",
                            plural(f.other_links, "other hard link", "other hard links"),
                            if f.other_links == 1 { "keeps" } else { "keep" },
                            f.inode
                        );
                    }
                    s.push('\n');
                }
                Err(why) => {
                    let _ = writeln!(s, "not fixed {p}: {why}; left untouched");
                }
            }
        }
        let _ = writeln!(
            s,
            "audit: {} of {} in {} ({} scanned, {} MiB; {} in {})",
            plural(self.findings.len() as u64, "occurrence", "occurrences"),
            plural(found.len() as u64, "variable", "variables"),
            plural(self.files_found, "file", "files"),
            plural(self.files, "file", "files"),
            self.bytes >> 20,
            plural(values as u64, "sensitive value", "sensitive values"),
            plural(needles as u64, "form", "forms"),
        );
        for (place, names) in by_place(&self.findings) {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let _ = writeln!(s, "audit: {}: {}", names.join(", "), place.says());
        }
        let _ = found;
        s
    }

    fn json(
        &self,
        values: usize,
        needles: usize,
        found: &std::collections::BTreeSet<String>,
    ) -> String {
        use serde_json::json;
        let findings: Vec<serde_json::Value> = self
            .findings
            .iter()
            .map(|l| {
                json!({
                    "file": l.file.to_string_lossy(),
                    "line": l.line,
                    "name": l.name,
                    "form": l.form,
                })
            })
            .collect();
        let fixes: Vec<serde_json::Value> = self
            .fixes
            .iter()
            .map(|(p, r)| match r {
                Ok(f) => json!({
                    "file": p.to_string_lossy(),
                    "fixed": true,
                    "replaced": f.replaced,
                    "left": f.left,
                    "other_links": if f.replaced > 0 { f.other_links } else { 0 },
                }),
                Err(why) => json!({
                    "file": p.to_string_lossy(),
                    "fixed": false,
                    "why": why.to_string(),
                }),
            })
            .collect();
        let mut v = json!({
            "findings": findings,
            "summary": {
                "occurrences": self.findings.len(),
                "variables": found.iter().collect::<Vec<_>>(),
                "files_with_findings": self.files_found,
                "files_scanned": self.files,
                "files_unreadable": self.unreadable,
                "bytes_scanned": self.bytes,
                "sensitive_values": values,
                "forms": needles,
            },
        });
        if !fixes.is_empty() {
            v["fixes"] = json!(fixes);
        }
        if !found.is_empty() {
            v["rotate"] = json!(ROTATE);
            let mut places = serde_json::Map::new();
            for (place, names) in by_place(&self.findings) {
                places.insert(place.key().into(), json!(names));
            }
            v["found_in"] = serde_json::Value::Object(places);
        }
        let mut s = serde_json::to_string_pretty(&v).expect("JSON of strings and numbers");
        s.push('\n');
        s
    }
}

/// `--staged` and `--repo`: what git holds, through the `git` program.
mod git {
    use super::Failure;
    use std::io::{BufRead, Read, Write};
    use std::path::PathBuf;
    use std::process::{Command, Stdio};

    fn git(args: &[&str]) -> Result<Vec<u8>, Failure> {
        let out = Command::new("git")
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| {
                Failure::runtime(format!(
                    "audit: cannot run git: {}",
                    crate::fsutil::io_kind(&e)
                ))
            })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let first = err.lines().next().unwrap_or("").trim().to_string();
            return Err(Failure::runtime(format!(
                "audit: git {} failed: {}",
                args.first().copied().unwrap_or(""),
                crate::log::escape_controls(&first, false)
            )));
        }
        Ok(out.stdout)
    }

    /// The repository's top directory.
    fn top() -> Result<PathBuf, Failure> {
        let out = git(&["rev-parse", "--show-toplevel"])?;
        let s = String::from_utf8_lossy(&out)
            .trim_end_matches('\n')
            .to_string();
        Ok(PathBuf::from(s))
    }

    fn split_z(b: &[u8]) -> impl Iterator<Item = &[u8]> {
        b.split(|&c| c == 0).filter(|s| !s.is_empty())
    }

    fn path_of(top: &std::path::Path, rel: &[u8]) -> PathBuf {
        use std::os::unix::ffi::OsStrExt;
        top.join(std::ffi::OsStr::from_bytes(rel))
    }

    /// One staged blob's findings and bytes, or why it was not read.
    pub type Staged = Result<(Vec<crate::audit::Finding>, u64), String>;

    /// Every tracked regular file of the working tree (submodules and
    /// symlinks left out), as paths under the top directory.
    pub fn tracked() -> Result<Vec<PathBuf>, Failure> {
        let top = top()?;
        let out = git(&["-C", &top.to_string_lossy(), "ls-files", "-s", "-z"])?;
        let mut v = Vec::new();
        for e in split_z(&out) {
            // "<mode> <oid> <stage>\t<path>"
            let Some(tab) = e.iter().position(|&c| c == b'\t') else {
                continue;
            };
            if !e.starts_with(b"100") {
                continue;
            }
            let p = path_of(&top, &e[tab + 1..]);
            if !v.contains(&p) && p.exists() {
                v.push(p);
            }
        }
        Ok(v)
    }

    /// The index version of every path that differs from HEAD (added,
    /// copied, modified, renamed or type-changed; deletions hold nothing),
    /// scanned from `git cat-file --batch`.
    pub fn scan_staged(finder: &crate::audit::Finder) -> Result<Vec<(PathBuf, Staged)>, Failure> {
        let top = top()?;
        let t = top.to_string_lossy().to_string();
        let changed = git(&[
            "-C",
            &t,
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--no-renames",
            "--diff-filter=d",
        ])?;
        let changed: std::collections::BTreeSet<&[u8]> = split_z(&changed).collect();
        if changed.is_empty() {
            return Ok(Vec::new());
        }
        let index = git(&["-C", &t, "ls-files", "-s", "-z"])?;
        let mut blobs: Vec<(PathBuf, String)> = Vec::new();
        for e in split_z(&index) {
            let Some(tab) = e.iter().position(|&c| c == b'\t') else {
                continue;
            };
            let rel = &e[tab + 1..];
            let meta = String::from_utf8_lossy(&e[..tab]).to_string();
            let mut parts = meta.split(' ');
            let (Some(mode), Some(oid)) = (parts.next(), parts.next()) else {
                continue;
            };
            if changed.contains(rel) && mode.starts_with("100") {
                blobs.push((path_of(&top, rel), oid.to_string()));
            }
        }
        let mut child = Command::new("git")
            .args(["-C", &t, "cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                Failure::runtime(format!(
                    "audit: cannot run git: {}",
                    crate::fsutil::io_kind(&e)
                ))
            })?;
        let mut stdin = child.stdin.take().expect("piped");
        let oids: Vec<String> = blobs.iter().map(|(_, o)| o.clone()).collect();
        let feeder = std::thread::spawn(move || {
            for o in oids {
                if writeln!(stdin, "{o}").is_err() {
                    break;
                }
            }
        });
        let mut out = std::io::BufReader::new(child.stdout.take().expect("piped"));
        let mut results = Vec::new();
        let io = |e: std::io::Error| {
            Failure::runtime(format!(
                "audit: reading git's index: {}",
                crate::fsutil::io_kind(&e)
            ))
        };
        for (path, _) in blobs {
            let mut header = String::new();
            out.read_line(&mut header).map_err(io)?;
            // "<oid> blob <size>" or "<oid> missing"
            let size = header
                .trim_end()
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse::<u64>().ok());
            let Some(size) = size.filter(|_| header.contains(" blob ")) else {
                results.push((path, Err("not in git's object store".to_string())));
                continue;
            };
            let mut blob = (&mut out).take(size);
            let r = crate::audit::scan_reader(&mut blob, finder).map_err(io)?;
            std::io::copy(&mut blob, &mut std::io::sink()).map_err(io)?;
            let mut lf = [0u8; 1];
            out.read_exact(&mut lf).map_err(io)?;
            results.push((path, Ok(r)));
        }
        let _ = feeder.join();
        let _ = child.wait();
        Ok(results)
    }
}
