//! Where `agentenv audit` looks: the default places (the agents'
//! transcripts, the shell histories, the MCP configurations), the walk of
//! a directory, and the scan of every file on a few threads. What it has
//! to say (a missing place, an unreadable directory, a symlink not
//! followed) is returned as [`Note`]s for the caller to print.

use super::{Finder, Scan, ScanError};
use crate::core::{Env, Note};
use std::path::{Path, PathBuf};

/// The default places, in order: what Claude Code, Codex and Gemini CLI
/// keep (the client table's `transcripts`), then the shell histories.
/// `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME` move the first two; fish's history follows `$XDG_DATA_HOME`; `$HISTFILE`
/// is added when set.
pub fn default_paths(env: &Env) -> Vec<PathBuf> {
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

/// Every default place: [`default_paths`], then the MCP server
/// configurations `agentenv mcp scan` reads (user and the project of
/// `cwd`), each once.
pub fn default_places(env: &Env, cwd: &Path) -> Vec<PathBuf> {
    let mut p = default_paths(env);
    let home = crate::core::get(env, "HOME").map(PathBuf::from);
    let project = crate::mcp::project_of(cwd, home.as_deref());
    for place in crate::mcp::places(env, Some(&project)) {
        if !p.contains(&place.path) {
            p.push(place.path);
        }
    }
    p
}

/// One file to scan: its path and whether the path itself may be a
/// symlink (named by the user or a default place).
pub struct Job {
    pub path: PathBuf,
    follow: bool,
}

/// Walk `root` (a directory) without following symlinks, in name order;
/// regular files become jobs. Unreadable directories are warned about.
fn walk(root: &Path, jobs: &mut Vec<Job>, notes: &mut Vec<Note>) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                notes.push(Note::warning(format!(
                    "audit: cannot read the directory {}: {}",
                    dir.display(),
                    crate::fsutil::io_kind(&e)
                )));
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
                notes.push(Note::info(format!(
                    "audit: not following the symlink {}",
                    p.display()
                )));
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

/// The jobs of the paths given (or the default places: `defaults`, a
/// missing one is only an info note), and what the walk had to say.
pub fn jobs_for(paths: &[PathBuf], defaults: bool) -> (Vec<Job>, Vec<Note>) {
    let mut jobs = Vec::new();
    let mut notes = Vec::new();
    for p in paths {
        match std::fs::metadata(p) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let text = format!("audit: {} does not exist; skipped", p.display());
                notes.push(if defaults {
                    Note::info(text)
                } else {
                    Note::warning(text)
                });
            }
            Err(e) => notes.push(Note::warning(format!(
                "audit: cannot read {}: {}; skipped",
                p.display(),
                crate::fsutil::io_kind(&e)
            ))),
            Ok(md) if md.is_dir() => walk(p, &mut jobs, &mut notes),
            Ok(md) if md.is_file() => jobs.push(Job {
                path: p.clone(),
                follow: true,
            }),
            Ok(_) => notes.push(Note::warning(format!(
                "audit: {} is not a regular file; skipped",
                p.display()
            ))),
        }
    }
    (jobs, notes)
}

/// Scan every job on up to `threads` threads; results in job order.
pub fn scan_all(jobs: &[Job], finder: &Finder, threads: usize) -> Vec<Result<Scan, ScanError>> {
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
        let r = super::scan_file(&job.path, job.follow, finder);
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

/// The threads audit scans on: one per core, at most 8.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::Level;

    /// Depth first in byte order of the names; a symlink met in the walk
    /// is an info note, not a job; a missing path named is a warning, a
    /// missing default place only an info note.
    #[test]
    fn the_walk_is_in_name_order_and_says_what_it_skips() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for f in ["b/z", "b/a", "a", "B"] {
            let p = r.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "x").unwrap();
        }
        std::os::unix::fs::symlink(r.join("a"), r.join("c")).unwrap();
        let missing = r.join("none");
        let (jobs, notes) = jobs_for(&[r.to_path_buf(), missing.clone()], false);
        let got: Vec<&Path> = jobs.iter().map(|j| j.path.as_path()).collect();
        let want: Vec<PathBuf> = ["B", "a", "b/a", "b/z"].iter().map(|f| r.join(f)).collect();
        assert_eq!(got, want);
        assert!(jobs.iter().all(|j| !j.follow));
        let texts: Vec<(Level, &str)> = notes.iter().map(|n| (n.level, n.text.as_str())).collect();
        let link = format!("audit: not following the symlink {}", r.join("c").display());
        let gone = format!("audit: {} does not exist; skipped", missing.display());
        assert_eq!(
            texts,
            vec![
                (Level::Info, link.as_str()),
                (Level::Warning, gone.as_str())
            ]
        );
        let (jobs, notes) = jobs_for(&[missing, r.join("a")], true);
        assert_eq!(notes[0].level, Level::Info);
        assert!(
            jobs.len() == 1 && jobs[0].follow,
            "a path named may be a link"
        );
    }
}
