//! What `-v` / `-vv` say about a session run (`env`, `exec`, `explain`),
//! and where the project root came from (the `~/.bashrc` trap).
//!
//! `-v` (info): where the project root came from; one line per store
//! walked (level and path, or why it is not walked); one line per overlay;
//! one line per layer that ran (kind, level, path, ok or failed with the
//! reason, milliseconds; see [`layer`]); the cache hit or miss with the
//! reason for a miss. `-vv` (debug) adds every candidate file or directory
//! that did not exist, and (recorded by `run_plain`) whether each plain file
//! was evaluated natively or sourced with bash. Names and paths only, never
//! a value. Everything here is returned as [`Note`]s; the CLI prints them
//! at its `-v` level.

use super::{paths, Prepared};
use crate::core::{Env, Note};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What decided the project root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootSource {
    /// `-g` (or `--require-trust` falling back): no project store.
    Global,
    /// Given by the caller (library option).
    Given,
    /// A variable of the base environment: `AGENTS_PROJECT_ROOT` or
    /// `CLAUDE_PROJECT_DIR`.
    Var(&'static str),
    /// The current directory.
    Cwd,
}

/// Where the project root of `p` came from, and — when a variable moved it
/// away from the current directory — the current directory's `.agents`
/// that was therefore not walked (only when it exists and is not one of
/// the walked stores).
pub fn project_root_source(p: &Prepared, base: &Env, given: bool) -> (RootSource, Option<PathBuf>) {
    let s = &p.scope;
    let source = if s.project_root.is_none() {
        RootSource::Global
    } else if given {
        RootSource::Given
    } else {
        super::scope::project_root_source(base).map_or(RootSource::Cwd, RootSource::Var)
    };
    let cwd_store = s.cwd.join(".agents");
    let unwalked = match source {
        RootSource::Var(_) | RootSource::Global
            if cwd_store.is_dir()
                && !s.stores.iter().any(|st| {
                    paths::realpath(&st.path, &s.cwd) == paths::realpath(&cwd_store, &s.cwd)
                }) =>
        {
            Some(cwd_store)
        }
        _ => None,
    };
    (source, unwalked)
}

/// The sentence about the project root that `-v` logs and `explain`
/// prints when a variable decided it or the cwd's store was not walked.
pub fn project_root_note(p: &Prepared, base: &Env, given: bool) -> Option<String> {
    let (source, unwalked) = project_root_source(p, base, given);
    let root = p.scope.project_root.as_deref().map(Path::display);
    let (RootSource::Var(k), Some(r)) = (&source, root) else {
        return None;
    };
    let head = format!("the project root is {r}, from ${k}");
    Some(match unwalked {
        Some(u) => format!(
            "{head}; the current directory's {} was therefore not walked \
             (unset {k} — `eval \"$(agentenv env)\"` in a shell rc file exports it — \
             or use the shell hook: agentenv hook)",
            u.display()
        ),
        None => head,
    })
}

/// `-v`: the project root and the stores and overlays walked; `-vv`: every
/// candidate that does not exist. `given`: the caller fixed the project
/// root. Returned as notes (info and debug), in order; the caller prints.
pub fn scope(p: &Prepared, base: &Env, given: bool) -> Vec<Note> {
    let mut out = Vec::new();
    let s = &p.scope;
    let mut info = |t: String| out.push(Note::info(t));
    match project_root_note(p, base, given) {
        Some(note) => info(note),
        None => match &s.project_root {
            Some(r) => {
                let from = if given {
                    "given"
                } else {
                    "the current directory"
                };
                info(format!("the project root is {} ({from})", r.display()));
            }
            None => match project_root_source(p, base, given).1 {
                Some(u) => info(format!(
                    "no project store (-g, or --require-trust): {} not walked",
                    u.display()
                )),
                None => info("no project store (-g, or --require-trust)".into()),
            },
        },
    }
    if s.system_root.is_none() {
        // The variable is named, not its value (it may hold anything).
        let set = crate::core::get(base, "AGENTS_SYSTEM_ROOT").is_some_and(|v| !v.is_empty());
        let cand = if set {
            "$AGENTS_SYSTEM_ROOT"
        } else {
            "/etc/agents"
        };
        info(format!(
            "store system: {cand} not walked (not a directory, or refused above)"
        ));
    }
    for st in &s.stores {
        if st.path.is_dir() {
            info(format!("store {}: {}", st.level, st.path.display()));
        } else {
            info(format!(
                "store {}: {} (does not exist)",
                st.level,
                st.path.display()
            ));
        }
    }
    if s.project_root.is_some() && s.level == "user" {
        info("store project: the same directory as the user store; walked once".into());
    }
    for o in &s.overlays {
        info(format!("overlay {}: {}", o.name, o.path.display()));
    }
    let at = |q: &Path| paths::at(q, &s.cwd);
    for f in &p.env_files {
        if !std::fs::metadata(at(&f.path)).is_ok_and(|m| m.is_file()) {
            out.push(Note::debug(format!(
                "candidate {} ({}): does not exist",
                f.path.display(),
                f.level
            )));
        }
    }
    for l in &p.lib_candidates {
        if !at(l).is_dir() {
            out.push(Note::debug(format!(
                "candidate lib {}: does not exist",
                l.display()
            )));
        }
    }
    for b in &p.bin_paths {
        if !at(b).is_dir() {
            out.push(Note::debug(format!(
                "candidate bin {}: does not exist (still put on PATH)",
                b.display()
            )));
        }
    }
    out
}

/// `-v`: one layer that ran.
pub fn layer(kind: &str, level: &str, path: &Path, failure: Option<&str>, took: Duration) -> Note {
    let ms = took.as_secs_f64() * 1000.0;
    Note::info(match failure {
        None => format!("layer {kind} ({level}) {}: ok, {ms:.1} ms", path.display()),
        Some(why) => format!(
            "layer {kind} ({level}) {}: failed ({why}), {ms:.1} ms",
            path.display()
        ),
    })
}

/// Why `--cache` missed for `key` in `dir` (for `-v`; the entry is looked
/// at again, read-only).
/// `changed`: what the key covers that changed since the last run of this
/// kind here (labels: `$NAME`, `file <path>`, …; never a value), when it
/// was kept.
pub fn cache_miss_reason(dir: &Path, key: &str, changed: Option<&[String]>) -> String {
    use std::os::unix::fs::MetadataExt;
    let path = dir.join(key);
    let m = match std::fs::symlink_metadata(&path) {
        Err(_) => {
            return match changed {
                Some(c) if !c.is_empty() => {
                    const SHOWN: usize = 12;
                    let mut list = c[..c.len().min(SHOWN)].join(", ");
                    if c.len() > SHOWN {
                        list.push_str(&format!(" and {} more", c.len() - SHOWN));
                    }
                    format!("no entry for this key; changed since the last run here: {list}")
                }
                _ => {
                    "no entry for this key (first run, or something the key covers changed)".into()
                }
            };
        }
        Ok(m) => m,
    };
    if !m.is_file() {
        return "the entry is not a regular file".into();
    }
    if m.uid() != rustix::process::geteuid().as_raw() {
        return "the entry is owned by another user".into();
    }
    match m.modified().ok().and_then(|t| t.elapsed().ok()) {
        Some(age) if age >= super::cache::TTL => {
            format!(
                "the entry expired ({} s old, TTL {} s)",
                age.as_secs(),
                super::cache::TTL.as_secs()
            )
        }
        _ => "the entry is not usable (future mtime or not UTF-8)".into(),
    }
}
