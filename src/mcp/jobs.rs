//! `mcp scan` and `mcp migrate` from start to end, without the command
//! line: the project, the files read, the findings, the text or JSON
//! printed and the exit status; for migrate the order of the writes (the
//! values into the store first, through a [`Destination`] the command line
//! gives; the configurations after, each backed up first). The command
//! line (`cli/mcp.rs`) holds the arguments, the session whose values are
//! looked for, the store writer and the printing.

use super::find::Finder;
use super::migrate::{self, findings_of, read_all};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A job's failure (exit 1), its message value-free.
pub(crate) struct Failed(pub String);

/// Where a moved value goes. Today a store file; a secret reference (a
/// keychain or vault entry, planned) is the other destination this seam
/// is for: it would write the reference into the store instead of the
/// value, and the server's rewrite stays the same.
pub(crate) trait Destination {
    /// The writer's failure, which a job's own failures become.
    type Error: From<Failed>;
    /// The destination as the moved lines name it.
    fn describe(&self) -> String;
    /// Write `name`'s `value`.
    fn put(&self, name: &str, value: &[u8]) -> Result<(), Self::Error>;
}

/// The project directory: `given` (relative to `cwd`; `Err`: not a
/// directory, a usage error), else the one `cwd` is in.
pub(crate) fn project_dir(cwd: &Path, given: Option<&Path>) -> Result<PathBuf, String> {
    match given {
        Some(d) => {
            let d = cwd.join(d);
            if !d.is_dir() {
                return Err(format!("mcp: {} is not a directory", d.display()));
            }
            Ok(std::fs::canonicalize(&d).unwrap_or(d))
        }
        None => {
            let env = crate::core::process_env();
            let home = crate::core::get(&env, "HOME").map(PathBuf::from);
            Ok(super::project_of(cwd, home.as_deref()))
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `mcp scan`: the output (text, or JSON with `json`) and the exit status
/// (1 when anything was found) for `project`, the stores holding `values`.
pub(crate) fn scan(project: &Path, values: Vec<(String, Vec<u8>)>, json: bool) -> (String, i32) {
    let masker = crate::mask::Masker::new(values);
    let finder = Finder::new(&masker);
    let places = super::places(&crate::core::process_env(), Some(project));
    let mut unreadable = 0;
    let reads = read_all(places, &mut unreadable);
    let found = findings_of(&reads, &finder);
    let servers: usize = reads.iter().map(|r| r.servers.len()).sum();
    let mut with: Vec<(usize, usize)> = found.iter().map(|f| (f.0, f.1)).collect();
    with.dedup();
    let text = if json {
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
    } else {
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
    };
    (text, if found.is_empty() { 0 } else { 1 })
}

/// `mcp migrate`: move the literal secrets of `project`'s configurations
/// into `dest` (`held`: what the stores hold now, by name) and rewrite the
/// servers — or, `dry_run`, print the masked diff and change nothing. The
/// backups go under `agents_dir`'s (else the user store's) `.backup/mcp`.
/// The output and the exit status (1 when a literal is left to change by
/// hand).
pub(crate) fn migrate<D: Destination>(
    project: &Path,
    held: &BTreeMap<String, Vec<u8>>,
    dest: &D,
    dry_run: bool,
    agents_dir: Option<PathBuf>,
) -> Result<(String, i32), D::Error> {
    let failed = |m: String| D::Error::from(Failed(m));
    let masker = crate::mask::Masker::new(held.iter().map(|(k, v)| (k.clone(), v.clone())));
    let finder = Finder::new(&masker);
    let places = super::places(&crate::core::process_env(), Some(project));
    let mut unreadable = 0;
    let reads = read_all(places, &mut unreadable);
    let found = findings_of(&reads, &finder);

    let d = migrate::decide(&reads, &found, held);
    let (plans, pending, diff_masker) = (d.plans, d.pending, d.diff_masker);
    let outputs = migrate::rewrites(&reads, &plans).map_err(failed)?;

    let mut out = String::new();
    if dry_run {
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
            migrate::refuse_unsafe(&reads[*ri].place.path).map_err(failed)?;
        }
        // The values into the store first; the configurations after, so a
        // failure leaves every server as it was.
        for (k, v) in &pending {
            if held.get(k).map(Vec::as_slice) != Some(v.as_bytes()) {
                dest.put(k, v.as_bytes())?;
            }
        }
        let backups = migrate::backup_dir(agents_dir).map_err(failed)?;
        for (ri, new) in &outputs {
            let r = &reads[*ri];
            let path = &r.place.path;
            let b = migrate::backup(&backups, path, &r.text).map_err(failed)?;
            crate::fsutil::write_atomic(
                path,
                new.as_bytes(),
                crate::fsutil::Mode::KeepOrUmask,
                false,
            )
            .map_err(|e| {
                failed(format!(
                    "mcp migrate: cannot write {}: {}; the values are in the store, the file is unchanged",
                    path.display(),
                    crate::fsutil::io_kind(&e)
                ))
            })?;
            out.push_str(&format!(
                "backup {}: {} (it holds the old values: delete it once the servers work)\n",
                path.display(),
                b.display()
            ));
        }
    }
    let verb = if dry_run { "would move" } else { "moved" };
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
        if dry_run {
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
    Ok((text.join("\t"), if left == 0 { 0 } else { 1 }))
}
