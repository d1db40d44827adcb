//! Path arithmetic exactly as the reference (CPython 3.11 `pathlib` and
//! `posixpath`) does it: `~` expansion, `realpath`, and `shutil.which`, on
//! top of the lexical rules in [`crate::compat::python`]. All on bytes;
//! nothing here decodes a path.
//!
//! Not for: anything that writes files.

use crate::compat::python;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

fn bytes(p: &OsStr) -> &[u8] {
    p.as_bytes()
}

fn os(v: Vec<u8>) -> OsString {
    OsString::from_vec(v)
}

/// `str(pathlib.PurePosixPath(p))` ([`python::pure_posix`]).
pub fn pathlib(p: &OsStr) -> PathBuf {
    PathBuf::from(os(python::pure_posix(bytes(p))))
}

pub use python::normpath;
use python::{join, split};

/// `os.path.abspath(p)` against `cwd`.
pub fn abspath(p: &Path, cwd: &Path) -> PathBuf {
    PathBuf::from(os(python::abspath(
        bytes(p.as_os_str()),
        bytes(cwd.as_os_str()),
    )))
}

/// Where `~` and `~user` point, from `HOME` in `env_home` (the base env) or
/// the password database.
fn home_of(user: &[u8], env_home: Option<&OsStr>) -> Option<Vec<u8>> {
    let dir = if user.is_empty() {
        match env_home {
            Some(h) => bytes(h).to_vec(),
            None => passwd_field(|_, uid| uid == rustix::process::getuid().as_raw())?,
        }
    } else {
        passwd_field(|name, _| name == user)?
    };
    let mut d = dir;
    while d.ends_with(b"/") {
        d.pop();
    }
    Some(d)
}

/// The home directory of the first `/etc/passwd` entry matching `pick`.
fn passwd_field(pick: impl Fn(&[u8], u32) -> bool) -> Option<Vec<u8>> {
    let data = std::fs::read("/etc/passwd").ok()?;
    for line in data.split(|c| *c == b'\n') {
        let f: Vec<&[u8]> = line.split(|c| *c == b':').collect();
        if f.len() < 7 {
            continue;
        }
        let uid = std::str::from_utf8(f[2])
            .ok()?
            .parse::<u32>()
            .unwrap_or(u32::MAX);
        if pick(f[0], uid) {
            return Some(f[5].to_vec());
        }
    }
    None
}

/// `pathlib.Path(p).expanduser()` (normalised as pathlib does). `Err` when a
/// `~user` cannot be resolved (the reference raises `RuntimeError`).
pub fn expanduser(p: &OsStr, env_home: Option<&OsStr>) -> Result<PathBuf, String> {
    let norm = pathlib(p);
    let b = bytes(norm.as_os_str());
    if !b.starts_with(b"~") {
        return Ok(norm);
    }
    let (first, rest) = match b.iter().position(|c| *c == b'/') {
        Some(i) => (&b[..i], &b[i..]),
        None => (b, &b[b.len()..]),
    };
    let Some(home) = home_of(&first[1..], env_home) else {
        return Err("could not determine home directory".into());
    };
    let mut home = if home.is_empty() { b"/".to_vec() } else { home };
    if home.starts_with(b"~") {
        return Err("could not determine home directory".into());
    }
    home.extend_from_slice(rest);
    Ok(pathlib(OsStr::from_bytes(&home)))
}

/// `os.path.realpath(p)` (non-strict): symlinks of existing prefixes
/// resolved, missing components kept lexically, relative paths against `cwd`.
pub fn realpath(p: &Path, cwd: &Path) -> PathBuf {
    let mut seen: std::collections::HashMap<Vec<u8>, Option<Vec<u8>>> = Default::default();
    let (path, _) = join_real(Vec::new(), bytes(p.as_os_str()), cwd, &mut seen);
    abspath(Path::new(OsStr::from_bytes(&path)), cwd)
}

fn lstat_is_link(p: &[u8], cwd: &Path) -> bool {
    let full = if p.starts_with(b"/") {
        PathBuf::from(OsStr::from_bytes(p))
    } else {
        cwd.join(OsStr::from_bytes(p))
    };
    std::fs::symlink_metadata(full).is_ok_and(|m| m.file_type().is_symlink())
}

fn readlink(p: &[u8], cwd: &Path) -> Option<Vec<u8>> {
    let full = if p.starts_with(b"/") {
        PathBuf::from(OsStr::from_bytes(p))
    } else {
        cwd.join(OsStr::from_bytes(p))
    };
    std::fs::read_link(full)
        .ok()
        .map(|t| t.into_os_string().into_vec())
}

fn join_real(
    mut path: Vec<u8>,
    rest: &[u8],
    cwd: &Path,
    seen: &mut std::collections::HashMap<Vec<u8>, Option<Vec<u8>>>,
) -> (Vec<u8>, bool) {
    let mut rest = rest;
    if rest.starts_with(b"/") {
        rest = &rest[1..];
        path = b"/".to_vec();
    }
    while !rest.is_empty() {
        let (name, tail) = match rest.iter().position(|c| *c == b'/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = tail;
        if name.is_empty() || name == b"." {
            continue;
        }
        if name == b".." {
            if !path.is_empty() {
                let (head, n) = split(&path);
                path = head;
                if n == b".." {
                    path = join(&join(&path, b".."), b"..");
                }
            } else {
                path = b"..".to_vec();
            }
            continue;
        }
        let newpath = join(&path, name);
        if !lstat_is_link(&newpath, cwd) {
            path = newpath;
            continue;
        }
        if let Some(r) = seen.get(&newpath) {
            if let Some(r) = r {
                path = r.clone();
                continue;
            }
            return (join(&newpath, rest), false);
        }
        seen.insert(newpath.clone(), None);
        let Some(target) = readlink(&newpath, cwd) else {
            path = newpath;
            continue;
        };
        let (p2, ok) = join_real(path, &target, cwd, seen);
        if !ok {
            return (join(&p2, rest), false);
        }
        path = p2;
        seen.insert(newpath, Some(path.clone()));
    }
    (path, true)
}

/// Whether two paths name the same directory (both resolved).
pub fn same_path(a: &Path, b: &Path, cwd: &Path) -> bool {
    realpath(a, cwd) == realpath(b, cwd)
}

/// `shutil.which(name, path=PATH)` on POSIX: `path` `None` means the
/// variable is unset (glibc's `CS_PATH` is searched), empty finds nothing,
/// an empty entry means the cwd (the result is then relative).
pub fn which(name: &str, path: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    let path: &[u8] = match path {
        Some(p) => bytes(p),
        None => b"/bin:/usr/bin",
    };
    if path.is_empty() {
        return None;
    }
    let mut seen: std::collections::HashSet<&[u8]> = std::collections::HashSet::new();
    for dir in path.split(|c| *c == b':') {
        if !seen.insert(dir) {
            continue;
        }
        let cand = join(dir, name.as_bytes());
        let full = if cand.starts_with(b"/") {
            PathBuf::from(os(cand.clone()))
        } else {
            cwd.join(OsStr::from_bytes(&cand))
        };
        let ok = std::fs::metadata(&full).is_ok_and(|m| !m.is_dir())
            && rustix::fs::access(&full, rustix::fs::Access::EXEC_OK).is_ok();
        if ok {
            return Some(PathBuf::from(os(cand)));
        }
    }
    None
}

/// Resolve `p` against `cwd` for a filesystem call (relative paths are
/// relative to the reference's cwd, which may differ from ours in tests).
pub fn at(p: &Path, cwd: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expanduser_uses_home() {
        let h = Some(OsStr::new("/h/"));
        assert_eq!(
            expanduser(OsStr::new("~/x/"), h).unwrap(),
            Path::new("/h/x")
        );
        assert_eq!(expanduser(OsStr::new("~"), h).unwrap(), Path::new("/h"));
        assert_eq!(
            expanduser(OsStr::new("~"), Some(OsStr::new(""))).unwrap(),
            Path::new("/")
        );
        assert_eq!(expanduser(OsStr::new("a/~"), h).unwrap(), Path::new("a/~"));
        assert!(expanduser(OsStr::new("~no_such_user_xyz/a"), h).is_err());
    }

    #[test]
    fn realpath_resolves_links_and_keeps_missing() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir(r.join("real")).unwrap();
        std::os::unix::fs::symlink(r.join("real"), r.join("link")).unwrap();
        assert_eq!(realpath(&r.join("link/x/../y"), r), r.join("real/y"));
        assert_eq!(realpath(Path::new("link/"), r), r.join("real"));
        std::os::unix::fs::symlink("loop", r.join("loop")).unwrap();
        assert_eq!(realpath(&r.join("loop/a"), r), r.join("loop/a"));
        assert!(same_path(&r.join("link"), &r.join("real/"), r));
    }

    #[test]
    fn which_like_shutil() {
        let cwd = Path::new("/");
        assert!(which("sh", Some(OsStr::new("/usr/bin:/bin")), cwd).is_some());
        assert!(which("sh", Some(OsStr::new("")), cwd).is_none());
        assert!(which("sh", None, cwd).is_some());
        assert!(which("no-such-tool-xyz", Some(OsStr::new("/bin")), cwd).is_none());
    }
}
