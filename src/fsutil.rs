//! File writes that never leave a half-written file: every write goes to a
//! temp file in the target's directory, is synced, then renamed over it.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// How the written file's mode is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Keep an existing file's mode; a new file gets `0o666 & !umask`.
    KeepOrUmask,
    /// Always this mode (e.g. `0o600` for secrets).
    Exactly(u32),
}

/// Resolve symlinks in the final component so that writing "through" a
/// symlink replaces its target, not the link.
fn resolve_target(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&p) {
            Ok(t) => {
                p = if t.is_absolute() {
                    t
                } else {
                    p.parent().unwrap_or(Path::new(".")).join(t)
                }
            }
            Err(_) => break,
        }
    }
    p
}

fn current_umask() -> u32 {
    // Reading the umask needs setting it; rustix makes that safe. The
    // process is single-threaded at the places we write files.
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    rustix::process::umask(old);
    old.bits() as u32
}

/// Write `bytes` to `path` atomically. Parent directories are created when
/// `create_parents` is set.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Mode, create_parents: bool) -> io::Result<()> {
    let target = resolve_target(path);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if create_parents {
        fs::create_dir_all(&dir)?;
    }
    let final_mode = match mode {
        Mode::Exactly(m) => m,
        Mode::KeepOrUmask => match fs::metadata(&target) {
            Ok(md) => md.permissions().mode() & 0o7777,
            Err(_) => 0o666 & !current_umask(),
        },
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".agentenv-")
        .suffix(".tmp")
        .tempfile_in(&dir)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(final_mode))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_keeps_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"new", Mode::KeepOrUmask, false).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn exact_mode_and_parents() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/f");
        write_atomic(&p, b"x", Mode::Exactly(0o600), true).unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn writes_through_symlink() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real");
        fs::write(&real, "old").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new", Mode::KeepOrUmask, false).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    }
}
