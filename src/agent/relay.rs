//! The masking side of a rewritten agent command (`hook CLIENT wrap`,
//! see [`super::hook`]): three FIFOs in a fresh owner-only directory —
//! `o` and `e` carry the command's stdout and stderr, `c` (ctl) the
//! shell's bytes — and one thread that masks `o` onto fd 1 and `e` onto
//! fd 2.
//!
//! The handshake with the shell:
//! 1. this side makes the FIFOs and opens their read ends (non-blocking,
//!    so the shell's opens never wait), then sends the directory to the
//!    sync pipe (fd 0), a line;
//! 2. the shell opens `c`, `o`, `e` for writing and writes `o` to `c`;
//!    on that byte this side removes the FIFOs and their directory (so
//!    nothing else can open them, and nothing is left behind) and sends
//!    the exports to the sync pipe, ended by NUL; the shell `eval`s them
//!    and runs the command;
//! 3. when the command is over the shell writes `x` to `c` and closes its
//!    ends. Each stream is read until its end, or — when a background job
//!    the command started still holds it — until both have been idle for
//!    [`DRAIN_IDLE`]; then a line goes to the sync pipe, which the shell
//!    waits for, so every byte the command wrote is out before the client
//!    reads the result;
//! 4. a stream a background job holds goes on being masked until it ends.
//!
//! Steps 3 and 4 are a [`Pump`] (the streaming policy `exec --redact`
//! shares: the idle release, the drain): [`Pump::until_drained`], the
//! go-on line, [`Pump::to_end`]. Its masker is built when the first
//! output byte arrives ([`Pump::lazy`]: a command that prints nothing
//! never builds one; the build takes well under a millisecond for a few
//! values).
//! If the shell never opens the FIFOs (it died), this side gives up after
//! [`OPEN_WAIT`] and removes them.
//!
//! [`DRAIN_IDLE`]: crate::mask::DRAIN_IDLE

use crate::mask::{FdOut, Pump};
use crate::platform::base_dirs;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags, CWD};
use rustix::io::Errno;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub(crate) use super::protocol::OPEN_WAIT;
use super::protocol::{CTL, DONE, ERR, OPENED, OUT};

/// The three FIFOs (read ends open) and their directory, which [`serve`]
/// removes once the shell has opened them (or on drop).
pub struct Fifos {
    dir: FifoDir,
    ends: Ends,
}

/// A fresh FIFO directory: taken off the file system, FIFOs and all, when
/// dropped (the open ends stay usable).
struct FifoDir(PathBuf);

impl Drop for FifoDir {
    fn drop(&mut self) {
        for n in [CTL, OUT, ERR] {
            let _ = rustix::fs::unlink(self.0.join(n));
        }
        let _ = rustix::fs::rmdir(&self.0);
    }
}

/// A name nobody can guess ahead (the std hasher's keys come from the
/// operating system's random source).
fn random_name() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("agentenv-cmd-{:016x}", h.finish())
}

/// Make an owner-only FIFO at `p` ([`crate::platform::make_fifo`]).
pub(crate) fn make_fifo(p: &Path) -> io::Result<()> {
    crate::platform::make_fifo(p)
}

/// [`make_fifo`], and its read end opened non-blocking: it opens at once,
/// and a writer's open then never waits.
pub(crate) fn make_fifo_to_read(p: &Path) -> io::Result<OwnedFd> {
    make_fifo(p)?;
    Ok(rustix::fs::open(
        p,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )?)
}

impl Fifos {
    pub fn create() -> io::Result<Fifos> {
        // A fresh 0700 directory (`mkdir` fails on anything already
        // there, a link included), in the first base that takes one.
        let mut last = io::Error::new(
            io::ErrorKind::InvalidInput,
            "no temp directory without a newline in its path",
        );
        let mut made = None;
        'bases: for base in base_dirs() {
            for _ in 0..8 {
                let dir = base.join(random_name());
                match rustix::fs::mkdirat(CWD, &dir, Mode::from_raw_mode(0o700)) {
                    Ok(()) => {
                        made = Some(dir);
                        break 'bases;
                    }
                    Err(Errno::EXIST) => {}
                    Err(e) => {
                        last = e.into();
                        continue 'bases;
                    }
                }
            }
        }
        let Some(dir) = made else {
            return Err(last);
        };
        let dir = FifoDir(dir);
        let ends = Ends {
            ctl: make_fifo_to_read(&dir.0.join(CTL))?,
            out: make_fifo_to_read(&dir.0.join(OUT))?,
            err: make_fifo_to_read(&dir.0.join(ERR))?,
        };
        Ok(Fifos { dir, ends })
    }

    /// The directory the shell opens `c`, `o` and `e` in.
    pub fn dir(&self) -> &Path {
        &self.dir.0
    }
}

fn dup_std(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<File> {
    Ok(File::from(rustix::io::dup(fd)?))
}

/// Read the ctl FIFO: the bytes there, or `None` at its end.
fn read_ctl(ctl: &OwnedFd) -> Option<Vec<u8>> {
    let mut b = [0u8; 16];
    loop {
        match rustix::io::read(ctl, &mut b) {
            Ok(0) => return None,
            Ok(k) => return Some(b[..k].to_vec()),
            Err(Errno::INTR) => {}
            Err(Errno::AGAIN) => return Some(Vec::new()),
            Err(_) => return None,
        }
    }
}

fn timespec(d: Duration) -> Timespec {
    Timespec::try_from(d).unwrap_or_default()
}

/// Run the handshake and the masking (module doc). `sync` is the pipe
/// the shell reads the directory, `prologue` and the go-on line from;
/// `values` are what the masker masks.
pub fn serve(
    fifos: Fifos,
    sync: File,
    prologue: &[u8],
    values: Vec<(String, Vec<u8>)>,
) -> io::Result<()> {
    let stdout = dup_std(std::io::stdout().as_fd())?;
    let stderr = dup_std(std::io::stderr().as_fd())?;
    let mut line = fifos.dir().as_os_str().as_encoded_bytes().to_vec();
    line.push(b'\n');
    let Fifos { dir, ends } = fifos;
    // On the shell's `o` the directory goes (dropped); if the shell never
    // comes, it goes when `relay` returns.
    relay(
        ends,
        [stdout, stderr],
        sync,
        &line,
        move || drop(dir),
        prologue,
        values,
    )
}

/// The read ends of one command's three FIFOs.
pub struct Ends {
    pub ctl: OwnedFd,
    pub out: OwnedFd,
    pub err: OwnedFd,
}

/// The handshake from its first line on, and the masking (module doc):
/// `first` goes to `sync`; on the shell's `o`, `opened` runs (the FIFOs
/// may leave the file system: the shell holds its ends) and `prologue`
/// goes to `sync`; then `ends.out` and `ends.err` are masked onto
/// `dst[0]` and `dst[1]` until the end, and the go-on line goes to `sync`.
pub fn relay(
    ends: Ends,
    dst: [File; 2],
    mut sync: File,
    first: &[u8],
    opened: impl FnOnce(),
    prologue: &[u8],
    values: Vec<(String, Vec<u8>)>,
) -> io::Result<()> {
    sync.write_all(first)?;
    // The shell's `o` once its output goes into the FIFOs.
    let started = Instant::now();
    // The end byte may come in the same read as `o` (a quick command).
    let over_at_once = loop {
        let left = OPEN_WAIT.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the shell did not open the FIFOs",
            ));
        }
        let mut fds = [PollFd::new(&ends.ctl, PollFlags::IN)];
        match poll(&mut fds, Some(&timespec(left))) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        if fds[0].revents().is_empty() {
            continue;
        }
        match read_ctl(&ends.ctl) {
            Some(b) if b.first() == Some(&OPENED) => break b[1..].contains(&DONE),
            Some(b) if b.is_empty() => {}
            // The shell gave up (closed `c`) or wrote something else.
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the shell did not open the FIFOs",
                ))
            }
        }
    };
    opened();
    sync.write_all(prologue)?;
    let Ends { ctl, out, err } = ends;
    let [stdout, stderr] = dst;
    let mut pump = Pump::lazy(values)
        .source(out, FdOut(stdout))
        .source(err, FdOut(stderr));
    // `x`, or the end of `c`: the command is over.
    pump = if over_at_once {
        pump.done()
    } else {
        pump.done_when(ctl.as_fd())
    };
    pump.until_drained()?;
    // The go-on line (or the pipe's end if the shell is gone).
    let _ = sync.write_all(b"\n");
    drop(sync);
    // A stream a background job holds goes on being masked until it ends.
    pump.to_end()
}
