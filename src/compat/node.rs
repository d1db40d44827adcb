//! Node's `path` module (POSIX flavour), on bytes: [`resolve`] is
//! `path.resolve(cwd, p)`, [`join`] is `path.join(a, b)` for a `b` without
//! a trailing separator. Nothing here touches the file system: `..` is
//! collapsed textually, symlinks are not followed, exactly as Node does.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The normalisation Node's `path.resolve` and `path.join` apply:
/// `path.normalize` without its rule that keeps a trailing separator.
/// Repeated separators and `.` collapse, `..` removes the part before it;
/// an absolute input stays absolute (`..` at the root stays at the root); a
/// relative input keeps leading `..` parts and becomes `.` when empty. Those
/// are exactly Go's `path.Clean` rules, so this is `compat::go::clean`.
pub fn normalize(path: &[u8]) -> Vec<u8> {
    super::go::clean(path)
}

/// Node `path.resolve(cwd, p)`: `p` made absolute against `cwd` (which
/// should itself be absolute; an empty `cwd` leaves `p` relative) and
/// normalised. An empty `p` gives `cwd`.
pub fn resolve(cwd: &Path, p: &OsStr) -> PathBuf {
    let b = p.as_bytes();
    let cwd = cwd.as_os_str().as_bytes();
    let joined = if b.first() == Some(&b'/') || cwd.is_empty() {
        b.to_vec()
    } else {
        let mut j = cwd.to_vec();
        j.push(b'/');
        j.extend_from_slice(b);
        j
    };
    PathBuf::from(OsString::from_vec(normalize(&joined)))
}

/// Node `path.join(a, b)`: joined with `/` and normalised, but not made
/// absolute. Empty parts are skipped; the empty join is `.`.
pub fn join(a: &Path, b: &str) -> PathBuf {
    let a = a.as_os_str().as_bytes();
    let mut j = Vec::with_capacity(a.len() + b.len() + 1);
    j.extend_from_slice(a);
    if !a.is_empty() && !b.is_empty() {
        j.push(b'/');
    }
    j.extend_from_slice(b.as_bytes());
    PathBuf::from(OsString::from_vec(normalize(&j)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(cwd: &str, p: &str) -> String {
        resolve(Path::new(cwd), OsStr::new(p))
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn resolve_like_node() {
        assert_eq!(res("/w", "./"), "/w");
        assert_eq!(res("/w", ""), "/w");
        assert_eq!(res("/w", "/a/b/../c/"), "/a/c");
        assert_eq!(res("/w", "a//b/./c/"), "/w/a/b/c");
        assert_eq!(res("/w", "../../.."), "/");
        assert_eq!(res("/w", "/.."), "/");
        assert_eq!(res("/", "x"), "/x");
        assert_eq!(res("/w", "..."), "/w/...");
        assert_eq!(res("/w", "//a//"), "/a");
        assert_eq!(res("/w/", "a"), "/w/a");
        assert_eq!(res("", "a/./b/"), "a/b");
        assert_eq!(res("", ""), ".");
        // Whitespace is part of the name.
        assert_eq!(res("/w", " /p"), "/w/ /p");
        assert_eq!(res("/w", "/installs/curator "), "/installs/curator ");
        assert_eq!(res("/w", "${"), "/w/${");
        assert_eq!(res("/w", "$HOME/x"), "/w/$HOME/x");
        assert_eq!(
            res("/w", "agent-bundle:path:plugin-root"),
            "/w/agent-bundle:path:plugin-root"
        );
    }

    #[test]
    fn resolve_keeps_non_utf8_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let p = OsStr::from_bytes(b"a\xff/./b");
        let r = resolve(Path::new("/w"), p);
        assert_eq!(r.as_os_str().as_bytes(), b"/w/a\xff/b");
    }

    #[test]
    fn join_like_node() {
        let j = |a: &str, b: &str| join(Path::new(a), b).to_string_lossy().into_owned();
        assert_eq!(j("", ".env"), ".env");
        assert_eq!(j("rel", ".env"), "rel/.env");
        assert_eq!(j("rel/", ".env.local"), "rel/.env.local");
        assert_eq!(j("./a/../b", ".env"), "b/.env");
        assert_eq!(j("../x", ".env"), "../x/.env");
        assert_eq!(j("/", ".env"), "/.env");
        assert_eq!(j("/a//b/", ".env"), "/a/b/.env");
        assert_eq!(j("", ""), ".");
    }
}
