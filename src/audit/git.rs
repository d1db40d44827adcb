//! `audit --staged` and `--repo`: what git holds, through the `git`
//! program.

use super::{Finder, Finding};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why git could not answer (value-free: the OS error's kind, or git's
/// own first line of stderr with its control characters escaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `git` did not start.
    Run(String),
    /// `git SUBCOMMAND` failed: its first line of stderr.
    Failed { command: String, first: String },
    /// Reading `git cat-file --batch`'s output failed.
    Index(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Run(kind) => write!(f, "audit: cannot run git: {kind}"),
            Error::Failed { command, first } => {
                write!(f, "audit: git {command} failed: {first}")
            }
            Error::Index(kind) => write!(f, "audit: reading git's index: {kind}"),
        }
    }
}

fn cannot_run(e: std::io::Error) -> Error {
    Error::Run(crate::fsutil::io_kind(&e))
}

fn git(args: &[&str]) -> Result<Vec<u8>, Error> {
    let out = Command::new("git")
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(cannot_run)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("").trim().to_string();
        return Err(Error::Failed {
            command: args.first().copied().unwrap_or("").to_string(),
            first: crate::log::escape_controls(&first, false).into_owned(),
        });
    }
    Ok(out.stdout)
}

/// The repository's top directory.
fn top() -> Result<PathBuf, Error> {
    let out = git(&["rev-parse", "--show-toplevel"])?;
    let s = String::from_utf8_lossy(&out)
        .trim_end_matches('\n')
        .to_string();
    Ok(PathBuf::from(s))
}

fn split_z(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    b.split(|&c| c == 0).filter(|s| !s.is_empty())
}

fn path_of(top: &Path, rel: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    top.join(std::ffi::OsStr::from_bytes(rel))
}

/// One staged blob's findings and bytes, or why it was not read.
pub type Staged = Result<(Vec<Finding>, u64), String>;

/// Every tracked regular file of the working tree (submodules and
/// symlinks left out), as paths under the top directory.
pub fn tracked() -> Result<Vec<PathBuf>, Error> {
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
pub fn scan_staged(finder: &Finder) -> Result<Vec<(PathBuf, Staged)>, Error> {
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
        .map_err(cannot_run)?;
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
    let io = |e: std::io::Error| Error::Index(crate::fsutil::io_kind(&e));
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
        let r = super::scan_reader(&mut blob, finder).map_err(io)?;
        std::io::copy(&mut blob, &mut std::io::sink()).map_err(io)?;
        let mut lf = [0u8; 1];
        out.read_exact(&mut lf).map_err(io)?;
        results.push((path, Ok(r)));
    }
    let _ = feeder.join();
    let _ = child.wait();
    Ok(results)
}
