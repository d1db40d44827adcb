//! Which path a Linux-only facility takes (docs/platforms.md, ARCHITECTURE.md
//! "Platforms").
//!
//! A build for macOS or FreeBSD always takes the portable paths (the
//! Linux calls are not compiled there). A Linux build takes them too when
//! `AGENTENV_PORTABLE=1` is in its environment, so the paths a Mac runs
//! are tested here: no sealed memfd, no pidfd, no pipe sizing, no `/proc`,
//! no `/dev/shm`.

/// The variable that makes a Linux build take the portable paths.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) const PORTABLE_VAR: &str = "AGENTENV_PORTABLE";

/// Whether the portable paths are taken: always off Linux; on Linux when
/// `AGENTENV_PORTABLE=1` (read once per process). Unset, a development
/// build made with `AGENTENV_PORTABLE=1` (build.rs, for the test suite)
/// takes them too; `AGENTENV_PORTABLE=0` turns that off.
pub(crate) fn portable() -> bool {
    #[cfg(target_os = "linux")]
    {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| match std::env::var_os(PORTABLE_VAR) {
            Some(v) => v == "1",
            None => option_env!("AGENTENV_PORTABLE_BUILD") == Some("1"),
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Ask for a pipe of `size` bytes (Linux `F_SETPIPE_SZ`, best effort: the
/// system's pipe-max-size may refuse). Elsewhere, and on the portable
/// path, the pipe keeps its size.
pub(crate) fn set_pipe_size(fd: std::os::fd::BorrowedFd<'_>, size: usize) {
    #[cfg(target_os = "linux")]
    if !portable() {
        let _ = rustix::pipe::fcntl_setpipe_size(fd, size);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, size);
}

/// A path that opens this process's (or, inherited, a child's) open file
/// `fd`: `/proc/self/fd/N` on Linux, `/dev/fd/N` on the portable path
/// (macOS and FreeBSD's fdescfs; on Linux a link into `/proc/self/fd`).
pub(crate) fn fd_path(fd: std::os::fd::BorrowedFd<'_>) -> std::path::PathBuf {
    use std::os::fd::AsRawFd;
    let n = fd.as_raw_fd();
    if portable() {
        format!("/dev/fd/{n}").into()
    } else {
        format!("/proc/self/fd/{n}").into()
    }
}

/// Make an owner-only FIFO at `p` (`mkfifoat`; macOS: `mkfifo`, which
/// rustix does not offer for Apple targets). Fails on anything already at
/// `p`, a link included.
pub(crate) fn make_fifo(p: &std::path::Path) -> std::io::Result<()> {
    #[cfg(not(target_vendor = "apple"))]
    {
        Ok(rustix::fs::mkfifoat(
            rustix::fs::CWD,
            p,
            rustix::fs::Mode::from_raw_mode(0o600),
        )?)
    }
    #[cfg(target_vendor = "apple")]
    {
        nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .map_err(|e| std::io::Error::from_raw_os_error(e as i32))
    }
}

/// Is process `pid` still there? Linux: `/proc/PID` exists (any user's);
/// the portable path: `kill(pid, 0)` succeeds or is refused for
/// permission (it exists, another user's).
pub(crate) fn alive(pid: u32) -> bool {
    if !portable() {
        return std::path::Path::new("/proc").join(pid.to_string()).exists();
    }
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    matches!(
        rustix::process::test_kill_process(p),
        Ok(()) | Err(rustix::io::Errno::PERM)
    )
}

/// Is `d` a directory of ours that nobody else can write or read?
pub(crate) fn private_dir(d: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(d).is_ok_and(|md| {
        md.is_dir() && md.uid() == rustix::process::geteuid().as_raw() && md.mode() & 0o077 == 0
    })
}

/// May a directory of ours live in this one? Only when nobody else can
/// rename it away (and put another in its place): the directory has the
/// sticky bit, or nobody but its owner — us or root — can write it. A
/// world-writable directory without the sticky bit (a Kubernetes memory
/// `emptyDir` on `/dev/shm` is `0777`) is refused, whoever owns it.
pub(crate) fn shared_safely(md: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let owner = md.uid() == rustix::process::geteuid().as_raw() || md.uid() == 0;
    md.is_dir() && (md.mode() & 0o1000 != 0 || (owner && md.mode() & 0o022 == 0))
}

/// The places on memory for the daemons' directories, in order:
/// `$XDG_RUNTIME_DIR` when it is an owner-only directory of ours
/// ([`private_dir`]); `/dev/shm` when [`shared_safely`] (a directory and
/// three FIFOs cost milliseconds of journal waits on a busy ext4 `/tmp`,
/// microseconds there) — not on the portable path: macOS and FreeBSD have
/// none. None holds a newline.
pub(crate) fn memory_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        let d = std::path::PathBuf::from(d);
        if private_dir(&d) {
            dirs.push(d);
        }
    }
    let shm = std::path::Path::new("/dev/shm");
    if !portable() && std::fs::symlink_metadata(shm).is_ok_and(|md| shared_safely(&md)) {
        dirs.push(shm.to_path_buf());
    }
    dirs.retain(|d| !d.as_os_str().as_encoded_bytes().contains(&b'\n'));
    dirs
}

/// Where a directory of ours may go, in order: the [`memory_dirs`], then
/// the temp dir when [`shared_safely`] (on macOS the per-user `$TMPDIR`,
/// which is owner-only). None holds a newline.
pub(crate) fn base_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs = memory_dirs();
    let tmp = std::env::temp_dir();
    if tmp.is_absolute()
        && !tmp.as_os_str().as_encoded_bytes().contains(&b'\n')
        && std::fs::symlink_metadata(&tmp).is_ok_and(|md| shared_safely(&md))
    {
        dirs.push(tmp);
    }
    dirs
}
