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
    /// Always this mode (e.g. `0o600` for agentenv's own state).
    Exactly(u32),
    /// A file that can hold values (`--into`, `launch --report`,
    /// `harness sandbox-env -o`): a new file is `0600`; an existing regular
    /// file owned by the effective user keeps its mode, with one warning
    /// naming the path when group or others can read it; an existing file
    /// owned by someone else is replaced by a `0600` file (its mode is
    /// never kept). Only regular files are written: a FIFO, device or
    /// socket at the target is refused ([`InputError::NotRegularTarget`])
    /// and nothing is written — a reader on a FIFO another user planted
    /// would get the values.
    Private,
}

/// Why a symlink on the way to a write target is not followed: the
/// kernel's `protected_symlinks` rule. A link in a sticky world-writable
/// directory (`/tmp`) is followed only when it is owned by the follower or
/// by the directory's owner.
fn foreign_symlink(link: &Path) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let lmd = fs::symlink_metadata(link)?;
    let dir = match link.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dmd = fs::metadata(dir)?;
    let sticky_world_writable = dmd.mode() & 0o1002 == 0o1002;
    let me = rustix::process::geteuid().as_raw();
    Ok(sticky_world_writable && lmd.uid() != me && lmd.uid() != dmd.uid())
}

/// Resolve symlinks in the final component so that writing "through" a
/// symlink replaces its target, not the link. A link that the kernel's
/// `protected_symlinks` rule would not follow (see [`foreign_symlink`]) is
/// refused with [`InputError::ForeignSymlink`], whatever that sysctl says:
/// following the link ourselves would bypass it.
pub fn resolve_target(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&p) {
            Ok(t) => {
                if foreign_symlink(&p)? {
                    return Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        InputError::ForeignSymlink,
                    ));
                }
                p = if t.is_absolute() {
                    t
                } else {
                    p.parent().unwrap_or(Path::new(".")).join(t)
                }
            }
            Err(_) => break,
        }
    }
    Ok(p)
}

fn current_umask() -> u32 {
    // Reading the umask needs setting it; rustix makes that safe. The
    // process is single-threaded at the places we write files.
    let old = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    rustix::process::umask(old);
    old.bits() as u32
}

/// The mode a [`Mode::Private`] write gives `target` (whose metadata, if it
/// exists, is `md`), and whether to warn that it stays readable by others.
fn private_mode(md: Option<&fs::Metadata>) -> (u32, bool) {
    use std::os::unix::fs::MetadataExt;
    match md {
        Some(md) if md.is_file() && md.uid() == rustix::process::geteuid().as_raw() => {
            let m = md.permissions().mode() & 0o7777;
            (m, m & 0o044 != 0)
        }
        _ => (0o600, false),
    }
}

/// Write `bytes` to `path` atomically. Parent directories are created
/// (`0700`) when `create_parents` is set.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Mode, create_parents: bool) -> io::Result<()> {
    let target = resolve_target(path)?;
    let existing = fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(is_special) {
        if mode == Mode::Private {
            return Err(refuse(InputError::NotRegularTarget));
        }
        return write_in_place(&target, bytes);
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if create_parents {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)?;
    }
    let mut warn_readable = false;
    let final_mode = match mode {
        Mode::Exactly(m) => m,
        Mode::KeepOrUmask => match &existing {
            Some(md) => md.permissions().mode() & 0o7777,
            None => 0o666 & !current_umask(),
        },
        Mode::Private => {
            let (m, w) = private_mode(existing.as_ref());
            warn_readable = w;
            m
        }
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
    if warn_readable {
        crate::warn!(
            "{} is readable by group or others (mode {:04o}) and keeps that mode; \
             run chmod 600 on it to make it private",
            path.display(),
            final_mode
        );
    }
    Ok(())
}

/// Append `bytes` to the regular file at `path` (created 0600 when
/// missing; a FIFO, device or socket is refused, as a foreign symlink is
/// by [`resolve_target`]), starting on a new line when the file does not
/// end with one. What was in the file stays (the `$GITHUB_ENV` of a step).
pub fn append_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let target = resolve_target(path)?;
    refuse_special_target(&target)?;
    let mut f = fs::OpenOptions::new()
        .append(true)
        .read(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc_flags::NOFOLLOW | libc_flags::NONBLOCK)
        .open(&target)?;
    let md = f.metadata()?;
    if !md.is_file() {
        return Err(refuse(InputError::NotRegularTarget));
    }
    let mut last = [0u8; 1];
    if md.len() > 0 && f.read_at(&mut last, md.len() - 1)? == 1 && last[0] != b'\n' {
        f.write_all(b"\n")?;
    }
    f.write_all(bytes)?;
    f.sync_all()
}

/// The open flags [`append_private`] adds (rustix's, as `i32`).
mod libc_flags {
    pub const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    pub const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;
}

/// A FIFO, character or block device, or socket.
fn is_special(md: &fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let t = md.file_type();
    t.is_char_device() || t.is_block_device() || t.is_fifo() || t.is_socket()
}

/// The refusal of a value file's target (`--into`, `-o`, `--report`) when
/// `target` exists and is a FIFO, device or socket (symlinks followed).
pub fn refuse_special_target(target: &Path) -> io::Result<()> {
    match fs::metadata(target) {
        Ok(md) if is_special(&md) => Err(refuse(InputError::NotRegularTarget)),
        _ => Ok(()),
    }
}

/// For the files that hold no values (not [`Mode::Private`]): a device,
/// FIFO or socket is written in place: renaming a temp file over it would
/// replace the node itself with a regular file. The open is non-blocking,
/// so a FIFO without a reader is an error (`ENXIO`), not a hang; the write
/// then blocks as usual.
fn write_in_place(target: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(target)?;
    rustix::fs::fcntl_setfl(&f, rustix::fs::OFlags::empty())?;
    f.write_all(bytes)?;
    f.flush()
}

/// Why [`read_input`] refused to read a file or [`resolve_target`] to
/// write one (the message is value-free).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputError {
    /// A socket or device where a file is expected.
    NotRegular,
    /// Larger than the caller's limit (in bytes).
    TooLarge(u64),
    /// A pipe whose writer did not finish within [`PIPE_TIMEOUT`].
    PipeTimeout,
    /// A write target reached through a symlink that another user planted
    /// in a sticky world-writable directory (see [`resolve_target`]).
    ForeignSymlink,
    /// A value file's target that is a FIFO, device or socket
    /// ([`Mode::Private`]).
    NotRegularTarget,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::NotRegular => f.write_str("not a regular file or pipe"),
            InputError::TooLarge(max) if *max >= 1 << 20 => {
                write!(f, "larger than {} MiB", max >> 20)
            }
            InputError::TooLarge(max) => write!(f, "larger than {max} bytes"),
            InputError::PipeTimeout => {
                write!(f, "pipe not finished within {} s", PIPE_TIMEOUT.as_secs())
            }
            InputError::ForeignSymlink => f.write_str(
                "a symlink owned by another user in a sticky world-writable directory; not followed",
            ),
            InputError::NotRegularTarget => f.write_str(
                "it is a FIFO, device or socket; files that hold values are written only as \
                 regular files: name a regular file or a new path",
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// How long [`read_input`] waits for a pipe (a FIFO, `<(cmd)`) to be
/// opened by a writer, written and closed.
pub const PIPE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn refuse(e: InputError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, e)
}

fn read_capped(f: impl io::Read, max: u64, hint: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::with_capacity(hint.min(max) as usize);
    f.take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(refuse(InputError::TooLarge(max)));
    }
    Ok(buf)
}

/// Read an input file of at most `max` bytes that must be a regular file
/// or a pipe (symlinks followed). A pipe — a named FIFO or what `<(cmd)`
/// gives — is read on a helper thread for at most [`PIPE_TIMEOUT`], so a
/// FIFO nobody writes, or a writer that never closes, cannot hang the
/// caller (the blocked thread ends with the process, or with its `exec`).
/// A device or socket is refused before any read (a directory is
/// `EISDIR`); a file that
/// grows past `max` is refused after reading `max + 1` bytes. Refusals are
/// [`InputError`]s inside the `io::Error` (see [`input_error`]).
pub fn read_input(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_input_until(path, max, std::time::Instant::now() + PIPE_TIMEOUT)
}

/// [`read_input`] with the pipe deadline given, so that the pipe inputs of
/// one command share one deadline (three FIFOs nobody writes cost one
/// [`PIPE_TIMEOUT`], not three). A pipe met after the deadline is refused
/// without being opened.
pub fn read_input_until(
    path: &Path,
    max: u64,
    deadline: std::time::Instant,
) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileTypeExt;
    let md = fs::metadata(path)?;
    if md.file_type().is_fifo() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(refuse(InputError::PipeTimeout));
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(fs::File::open(p).and_then(|f| read_capped(f, max, 0)));
        });
        return rx
            .recv_timeout(left)
            .unwrap_or_else(|_| Err(refuse(InputError::PipeTimeout)));
    }
    read_regular(path, max)
}

/// Read a regular file of at most `max` bytes (symlinks followed); a FIFO,
/// socket or device is refused ([`InputError::NotRegular`]) without
/// blocking, even one swapped in after a check.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let md = fs::metadata(path)?;
    if md.is_dir() {
        return Err(io::Error::from_raw_os_error(
            rustix::io::Errno::ISDIR.raw_os_error(),
        ));
    }
    if !md.is_file() {
        return Err(refuse(InputError::NotRegular));
    }
    if md.len() > max {
        return Err(refuse(InputError::TooLarge(max)));
    }
    // Non-blocking open: if the path was swapped for a FIFO after the
    // check, the open still returns at once and the type check refuses it.
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)?;
    let md = f.metadata()?;
    if !md.is_file() {
        return Err(refuse(InputError::NotRegular));
    }
    read_capped(f, max, md.len())
}

/// The [`InputError`] inside `e`, if [`read_input`] refused the file.
pub fn input_error(e: &io::Error) -> Option<InputError> {
    e.get_ref()
        .and_then(|r| r.downcast_ref::<InputError>())
        .copied()
}

/// The one describer of I/O errors in messages: a refusal of
/// [`read_input`] / [`resolve_target`] as
/// its own text, an OS error as its description without the
/// `(os error N)` suffix, anything else as its kind's description — all in
/// lower case (`no such file or directory`, `permission denied`), never a
/// Rust `Debug` name and never the OS message with a path in it (the
/// caller names the path).
pub fn io_kind(e: &io::Error) -> String {
    let s = if let Some(refused) = input_error(e) {
        refused.to_string()
    } else if let Some(errno) = e.raw_os_error().or_else(|| wrapped_os_error(e)) {
        let s = io::Error::from_raw_os_error(errno).to_string();
        // std formats as "<description> (os error N)".
        match s.rfind(" (os error") {
            Some(i) => s[..i].to_string(),
            None => s,
        }
    } else {
        e.kind().to_string()
    };
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_uppercase() && !c.clone().next().is_some_and(char::is_uppercase) => {
            f.to_lowercase().chain(c).collect()
        }
        _ => s,
    }
}

/// The OS error number inside an error that wraps one without exposing it:
/// tempfile's errors (a temp file that cannot be made in a missing or
/// read-only directory) keep the OS error only in their text, `<reason>
/// (os error N) at path <temp file>`, so that the reason is not lost as
/// "entity not found".
fn wrapped_os_error(e: &io::Error) -> Option<i32> {
    let inner = e.get_ref()?.to_string();
    let at = inner.find("(os error ")? + "(os error ".len();
    let digits: String = inner[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The process's current directory; `Err` is the one message for when it
/// cannot be read (it was removed, a parent lost its search permission):
/// `cannot read the current directory: <reason>`
/// ([`crate::fsutil::io_kind`]).
pub fn current_dir() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| {
        format!(
            "cannot read the current directory: {}",
            crate::fsutil::io_kind(&e)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_kind_is_lower_case_text_never_a_debug_name() {
        let nf = io::Error::from_raw_os_error(rustix::io::Errno::NOENT.raw_os_error());
        assert_eq!(io_kind(&nf), "no such file or directory");
        let acc = io::Error::from_raw_os_error(rustix::io::Errno::ACCESS.raw_os_error());
        assert_eq!(io_kind(&acc), "permission denied");
        let custom = io::Error::new(io::ErrorKind::InvalidData, "x");
        assert_eq!(io_kind(&custom), "invalid data");
        let kind_only = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(io_kind(&kind_only), "entity not found");
        let refused = read_input(std::path::Path::new("/dev/zero"), 1).unwrap_err();
        assert_eq!(io_kind(&refused), "not a regular file or pipe");
    }

    /// Files that hold no values (a man page, `init`'s settings) are still
    /// written in place into a device or FIFO.
    #[test]
    fn devices_and_fifos_are_written_in_place_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic(Path::new("/dev/null"), b"x", Mode::KeepOrUmask, false).unwrap();
        let e = write_atomic(Path::new("/dev/full"), b"x", Mode::KeepOrUmask, false).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NOSPC.raw_os_error())
        );
        for dev in ["/dev/null", "/dev/full"] {
            assert!(
                fs::metadata(dev).unwrap().file_type().is_char_device(),
                "{dev}"
            );
        }
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        // No reader: an error at once, and the FIFO is still a FIFO.
        let e = write_atomic(&fifo, b"x", Mode::KeepOrUmask, false).unwrap_err();
        assert_eq!(
            e.raw_os_error(),
            Some(rustix::io::Errno::NXIO.raw_os_error())
        );
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        // With a reader: the bytes go through the pipe.
        let f2 = fifo.clone();
        let reader = std::thread::spawn(move || fs::read(f2).unwrap());
        let t = std::time::Instant::now();
        loop {
            match write_atomic(&fifo, b"through", Mode::KeepOrUmask, false) {
                Ok(()) => break,
                Err(_) if t.elapsed() < std::time::Duration::from_secs(5) => {
                    std::thread::sleep(std::time::Duration::from_millis(10))
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(reader.join().unwrap(), b"through");
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    }

    /// Issue 22 #4: a value file ([`Mode::Private`]) never goes into a
    /// FIFO, device or socket, even with a reader waiting on the FIFO.
    #[test]
    fn private_writes_refuse_fifos_devices_and_sockets() {
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        let mut reader = fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(&fifo)
            .unwrap();
        let sock = d.path().join("sock");
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        for p in [fifo.as_path(), &sock, Path::new("/dev/null")] {
            let e = write_atomic(p, b"SECRET", Mode::Private, false).unwrap_err();
            assert_eq!(input_error(&e), Some(InputError::NotRegularTarget), "{p:?}");
        }
        let mut got = Vec::new();
        let _ = io::Read::read_to_end(&mut reader, &mut got);
        assert!(got.is_empty());
        assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert!(fs::metadata(&sock).unwrap().file_type().is_socket());
        assert!(fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn read_input_refuses_devices_dirs_and_big_files_and_bounds_pipes() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        mkfifo(&fifo);
        // No writer: refused after the pipe timeout, not a hang.
        let t = std::time::Instant::now();
        let e = read_input(&fifo, 100).unwrap_err();
        assert_eq!(input_error(&e), Some(InputError::PipeTimeout));
        assert!(t.elapsed() < PIPE_TIMEOUT * 2);
        // A writer that finishes: read like a file.
        let fifo2 = d.path().join("fifo2");
        mkfifo(&fifo2);
        let w = fifo2.clone();
        let writer = std::thread::spawn(move || fs::write(w, "A=1\n"));
        assert_eq!(read_input(&fifo2, 100).unwrap(), b"A=1\n");
        writer.join().unwrap().unwrap();
        let e = read_input(Path::new("/dev/zero"), 100).unwrap_err();
        assert_eq!(input_error(&e), Some(InputError::NotRegular));
        let e = read_input(d.path(), 100).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::IsADirectory);
        let f = d.path().join("f");
        fs::write(&f, "0123456789").unwrap();
        assert_eq!(read_input(&f, 10).unwrap(), b"0123456789");
        let e = read_input(&f, 9).unwrap_err();
        assert_eq!(input_error(&e), Some(InputError::TooLarge(9)));
        assert_eq!(e.to_string(), "larger than 9 bytes");
        let e = read_input(&d.path().join("none"), 9).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert_eq!(input_error(&e), None);
    }

    fn mkfifo(p: &Path) {
        let made = std::process::Command::new("mkfifo").arg(p).status();
        assert!(made.unwrap().success(), "mkfifo {}", p.display());
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn writes_and_keeps_mode() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"new", Mode::KeepOrUmask, false).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(mode(&p), 0o640);
    }

    #[test]
    fn exact_mode_and_parents() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/f");
        write_atomic(&p, b"x", Mode::Exactly(0o600), true).unwrap();
        assert_eq!(mode(&p), 0o600);
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
