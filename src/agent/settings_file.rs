//! The settings file `init` writes: kept inside `--project DIR`, written
//! atomically with its mode kept (a new one 0600 in a 0700 directory), and
//! the program its user-scope hook names.

use std::path::Path;

/// For `--project DIR`: refuse a settings file (or its directory) that a
/// symbolic link places outside the project.
pub(crate) fn check_inside_project(project: &Path, path: &Path) -> Result<(), String> {
    let root = std::fs::canonicalize(project).map_err(|e| {
        format!(
            "--project {}: {}",
            project.display(),
            crate::fsutil::io_kind(&e)
        )
    })?;
    let dir = path.parent().expect("DIR/.claude/…");
    // The directory: where it really is (when it exists).
    let real_dir = match std::fs::canonicalize(dir) {
        Ok(d) => d,
        Err(_) => return Ok(()), // created by init, inside the project
    };
    let target = if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let t = std::fs::read_link(path).map_err(|e| crate::fsutil::io_kind(&e))?;
        let t = real_dir.join(t);
        match std::fs::canonicalize(&t) {
            Ok(c) => c,
            Err(_) => crate::agent::guard::normalize(&t),
        }
    } else {
        real_dir.join(path.file_name().expect("a file name"))
    };
    if target.starts_with(&root) {
        Ok(())
    } else {
        Err(format!(
            "it is a symbolic link (or in one) that leads out of the project, to {}; not written (edit that file yourself, or replace the link)",
            target.display()
        ))
    }
}

/// The program the user-settings hook names: the `PATH` entry that is this
/// binary, else the binary's own path; `None` when it has no UTF-8 path.
pub(crate) fn own_program(env: &crate::core::Env) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let exe = std::env::current_exe().ok()?;
    let me = std::fs::metadata(&exe).ok()?;
    let on_path = crate::core::get(env, "PATH").and_then(|p| {
        std::env::split_paths(p)
            .filter(|d| d.is_absolute())
            .map(|d| d.join("agentenv"))
            .find(|c| {
                std::fs::metadata(c).is_ok_and(|m| m.dev() == me.dev() && m.ino() == me.ino())
            })
    });
    on_path.unwrap_or(exe).into_os_string().into_string().ok()
}

/// Write the settings atomically: an existing file keeps its mode; a new
/// one is 0600 in a directory created 0700.
pub(crate) fn write_settings(path: &Path, bytes: &[u8], exists: bool) -> std::io::Result<()> {
    use crate::fsutil::{write_atomic, Mode};
    if exists {
        return write_atomic(path, bytes, Mode::KeepOrUmask, false);
    }
    if let Some(dir) = path.parent() {
        if !dir.is_dir() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    write_atomic(path, bytes, Mode::Exactly(0o600), false)
}
