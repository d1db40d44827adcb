//! The masking daemon of rewritten agent commands (`hook CLIENT daemon`,
//! internal): one process per user and agentenv binary that does, for
//! every wrapped command, what `hook CLIENT wrap` ([`super::relay`]) does for
//! one — so a command starts no process of agentenv's own.
//!
//! Its directory ([`dir`]: owner-only, in `$XDG_RUNTIME_DIR` or
//! `/dev/shm`) holds `lock` (the daemon holds an exclusive `flock` on it
//! while it runs: a second daemon exits at once), `pid`, and [`SLOTS`]
//! slot directories `0` … `7`, each with four FIFOs: `c` (the shell's
//! control bytes), `o` and `e` (the command's stdout and stderr), `r` (the
//! replies). The daemon holds the read ends of `c`, `o` and `e`, so a
//! shell's opens never wait. One thread per slot:
//!
//! 1. the shell checks that the daemon the hook named (`PID:DIR`) is
//!    alive, claims a free slot by creating `N/lock` exclusively (the
//!    shell's `set -C`: no process), opens `r` read-write and `c`, and writes one
//!    line to `c`: its pid, the descriptors where it saved its stdout and
//!    stderr, the client, the cache entry;
//! 2. the slot's thread opens the shell's saved stdout and stderr through
//!    `/proc/PID/fd/N` ([`open_dst`]: a pipe, a character device, or a
//!    regular file the shell appends to, such as Claude Code's task output
//!    file, opened in append mode too), reads the entry, writes the
//!    exports to an owner-only file `v` in the slot and answers `ok`; a
//!    relay thread then runs [`relay`] (the shell's `o`, the
//!    masking, the go-on line). On any failure — a file the shell writes
//!    at an offset (a second open would not share it), an entry gone
//!    stale — it answers `no`, and the shell starts the per-command helper
//!    instead;
//! 3. once the shell has its ends open (`o`), `v` is removed, the slot
//!    gets fresh FIFOs and its claim is removed: a slot is busy only for
//!    the handshake.
//!
//! A claim nobody followed with a request (the shell died) is cleared
//! after [`STALE_CLAIM`]. The daemon leaves after [`IDLE_EXIT`] with no
//! command (or `$AGENTENV_DAEMON_IDLE` seconds), when its directory is
//! taken from it, or when its executable is replaced (a new agentenv
//! starts its own): it first removes `pid` and the slots, so no shell
//! finds a slot without a reader. `pre-tool-use` starts it when it is not
//! running (`AGENTENV_NO_DAEMON=1`: never; each command then starts the
//! helper), and it starts the value daemon of secret references when the
//! entry holds some. A referenced value comes only from the value daemon
//! (`entry::load_entry_held`); on a miss it answers `no` and the helper
//! resolves the reference.

use crate::agent::relay::{make_fifo, make_fifo_to_read, relay, Ends};
use crate::platform::{memory_dirs, private_dir};
use rustix::fd::OwnedFd;
use rustix::fs::{FlockOperation, Mode, OFlags, CWD};
use rustix::io::Errno;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use super::protocol::SLOTS;
use super::protocol::{
    parse_request, CTL, ERR, EXPORTS, IDLE_EXIT, LOCK, NO, OK, OUT, REPLY, REQUEST_WAIT,
    SLOT_FILES, STALE_CLAIM,
};

/// The directory of this user's daemon for this agentenv binary (the
/// protocol's version and a hash of the executable's path in its name, so
/// two builds never serve each other's shells), or `None` when there is
/// no owner-only place for it, or `AGENTENV_NO_DAEMON` is set, or on the
/// portable path (macOS, FreeBSD, `AGENTENV_PORTABLE=1`): without
/// `/proc/PID/fd` the daemon cannot open the shell's stdout, so every
/// command takes the per-command helper.
pub fn dir() -> Option<PathBuf> {
    if std::env::var_os("AGENTENV_NO_DAEMON").is_some_and(|v| !v.is_empty() && v != "0") {
        return None;
    }
    if crate::platform::portable() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let base = memory_dirs().into_iter().next()?;
    let uid = rustix::process::geteuid().as_raw();
    let hash = fnv1a(exe.as_os_str().as_encoded_bytes()) as u32;
    Some(base.join(format!("agentenv-wrap-v1-{uid}-{hash:08x}")))
}

/// FNV-1a: a hash that is the same in every build and run (the std's
/// hasher is keyed at random).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn open_lock(d: &Path) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        d.join("lock"),
        OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::from_raw_mode(0o600),
    )?)
}

/// `PID:DIR` of the daemon when it is running (its lock is held; the
/// shell checks that PID is alive before it takes a slot), else start one
/// (`program hook CLIENT daemon`, detached, stdio on `/dev/null`) and give
/// `None`: this command goes the helper's way.
pub fn ensure(program: &str, client: &str, refs: bool) -> Option<String> {
    let d = dir()?;
    if private_dir(&d) {
        if let Ok(lock) = open_lock(&d) {
            match rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive) {
                Err(Errno::WOULDBLOCK) => {
                    let pid = std::fs::read_to_string(d.join("pid")).ok()?;
                    let pid: u32 = pid.trim().parse().ok()?;
                    return Some(format!("{pid}:{}", d.to_str()?));
                }
                Ok(()) => drop(lock),
                Err(_) => return None,
            }
        }
    } else if std::fs::symlink_metadata(&d).is_ok() {
        // Not ours, or not private (another user took the name first, in
        // a shared directory): never used. Every command then goes the
        // per-command helper's way, masked as well, a few ms slower.
        crate::info!(
            "the masking daemon's directory {} is not a private directory of yours; \
             each command starts its own masking helper instead",
            d.display()
        );
        return None;
    }
    let mut daemon = std::process::Command::new(program);
    if refs {
        daemon.env(WITH_REFS, "1");
    }
    let spawned = daemon
        .args(["hook", client, "daemon"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    // The daemon outlives this hook, which exits at once: whoever adopts
    // it reaps it.
    drop(spawned);
    None
}

/// Set on a daemon [`ensure`] starts for an entry holding secret
/// references: it starts the value daemon too.
const WITH_REFS: &str = "AGENTENV_DAEMON_REFS";

/// Start the value daemon (`crate::refs::cache`) when none answers and
/// values are kept (`AGENTENV_REF_TTL` not 0); a thread of ours reaps it. This daemon holds a referenced value only as
/// the value daemon gives it, for one command's exports and masking.
fn start_value_daemon() {
    let ttl = crate::refs::seconds(
        &crate::core::process_env(),
        "AGENTENV_REF_TTL",
        crate::refs::DEFAULT_TTL,
    );
    if ttl.is_zero() || crate::refs::cache::Client::new().is_some() {
        return;
    }
    if let Some(mut child) = crate::refs::cache::spawn() {
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

/// What the slots and the idle clock share.
struct State {
    /// Requests being handled and commands being relayed.
    active: AtomicUsize,
    /// The daemon is leaving: no slot is made anew, no request taken.
    closing: AtomicBool,
    /// Seconds since `start` of the last request.
    last: AtomicU64,
    start: Instant,
}

impl State {
    fn touch(&self) {
        self.last
            .store(self.start.elapsed().as_secs(), Ordering::Relaxed);
    }
    fn idle(&self) -> Duration {
        let last = Duration::from_secs(self.last.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}

/// The executable's identity: the daemon leaves when it changes.
fn exe_id(exe: &Path) -> Option<(u64, u64, i64)> {
    std::fs::metadata(exe)
        .ok()
        .map(|m| (m.dev(), m.ino(), m.mtime()))
}

/// `hook CLIENT daemon`: run the daemon (module doc) until it is idle.
/// Prints nothing; its exit status: 0, also when another daemon holds the
/// lock.
pub fn serve() -> i32 {
    let _ = rustix::process::setsid();
    let _ = std::env::set_current_dir("/");
    let Some(d) = dir() else { return 0 };
    match rustix::fs::mkdirat(CWD, &d, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(_) => return 1,
    }
    if !private_dir(&d) {
        return 1;
    }
    let Ok(lock) = open_lock(&d) else {
        return 1;
    };
    if rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
        return 0;
    }
    if std::env::var_os(WITH_REFS).is_some_and(|v| v == "1") {
        start_value_daemon();
    }
    let idle_exit = std::env::var("AGENTENV_DAEMON_IDLE")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(IDLE_EXIT, Duration::from_secs);
    let exe = std::env::current_exe().ok();
    let id = exe.as_deref().and_then(exe_id);
    let state = Arc::new(State {
        active: AtomicUsize::new(0),
        closing: AtomicBool::new(false),
        last: AtomicU64::new(0),
        start: Instant::now(),
    });
    for i in 0..SLOTS {
        let (d, state) = (d.clone(), state.clone());
        std::thread::spawn(move || slot_loop(&d.join(i.to_string()), &state));
    }
    let pid = format!("{}\n", std::process::id());
    if crate::fsutil::write_atomic(
        &d.join("pid"),
        pid.as_bytes(),
        crate::fsutil::Mode::Private,
        false,
    )
    .is_err()
    {
        shut(&d);
        return 1;
    }
    // SIGTERM wakes the loop through a pipe (the handler only writes it).
    let term = rustix::pipe::pipe().ok().and_then(|(r, w)| {
        signal_hook::low_level::pipe::register(signal_hook::consts::SIGTERM, w)
            .ok()
            .map(|_| r)
    });
    // A replaced binary is noticed within seconds; the idle clock needs
    // no finer step than a quarter of its span.
    let tick = (idle_exit / 4).clamp(Duration::from_millis(200), Duration::from_secs(5));
    loop {
        let termed = match &term {
            Some(r) => {
                use rustix::event::{poll, PollFd, PollFlags, Timespec};
                let mut fds = [PollFd::new(r, PollFlags::IN)];
                let ts = Timespec::try_from(tick).unwrap_or_default();
                let _ = poll(&mut fds, Some(&ts));
                !fds[0].revents().is_empty()
            }
            None => {
                std::thread::sleep(tick);
                false
            }
        };
        let replaced = exe.as_deref().and_then(exe_id) != id;
        let taken = std::fs::read(d.join("pid")).ok().as_deref() != Some(pid.as_bytes());
        let idle = state.active.load(Ordering::SeqCst) == 0 && state.idle() >= idle_exit;
        if replaced || taken || idle || termed {
            // No new command from here on; the commands in flight are
            // served to their end (their output is not lost, their shells
            // do not wait on a reply that never comes).
            state.closing.store(true, Ordering::SeqCst);
            if !taken {
                shut(&d);
            }
            while state.active.load(Ordering::SeqCst) > 0 {
                std::thread::sleep(Duration::from_millis(50));
            }
            if !taken {
                shut(&d);
            }
            drop(lock);
            return 0;
        }
    }
}

/// Take `pid` and the slots away (the `lock` file stays: unlinking it
/// would let a second daemon lock a new file while this one holds the
/// old).
fn shut(d: &Path) {
    let _ = std::fs::remove_file(d.join("pid"));
    for i in 0..SLOTS {
        clear_slot(&d.join(i.to_string()));
    }
}

fn clear_slot(s: &Path) {
    for n in SLOT_FILES {
        let _ = rustix::fs::unlink(s.join(n));
    }
    let _ = rustix::fs::rmdir(s);
}

/// A fresh slot: its FIFOs made and their read ends open, and no claim
/// (removed last: from then on a shell may take it).
fn fresh_slot(s: &Path) -> std::io::Result<Ends> {
    for n in [CTL, OUT, ERR, REPLY, EXPORTS] {
        let _ = rustix::fs::unlink(s.join(n));
    }
    match rustix::fs::mkdirat(CWD, s, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    if !private_dir(s) {
        return Err(std::io::Error::other("the slot is not a private directory"));
    }
    let ctl = make_fifo_to_read(&s.join(CTL))?;
    let out = make_fifo_to_read(&s.join(OUT))?;
    let err = make_fifo_to_read(&s.join(ERR))?;
    make_fifo(&s.join(REPLY))?;
    match rustix::fs::unlink(s.join(LOCK)) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(Ends { ctl, out, err })
}

fn slot_loop(s: &Path, state: &Arc<State>) {
    loop {
        if state.closing.load(Ordering::SeqCst) {
            return;
        }
        let ends = match fresh_slot(s) {
            Ok(e) => e,
            Err(_) => {
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
        };
        let Some(line) = wait_request(&ends.ctl, s) else {
            continue;
        };
        state.active.fetch_add(1, Ordering::SeqCst);
        state.touch();
        if state.closing.load(Ordering::SeqCst) {
            // Leaving: this shell goes the helper's way.
            let _ = reply_no(s);
            state.active.fetch_sub(1, Ordering::SeqCst);
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        match take(s, &line, ends, tx) {
            Some(mut job) => {
                // The answer first (with the shell's nonce: an `ok` left
                // in `r` beforehand is not this one): the relay's thread
                // starts meanwhile.
                let ok = format!("{OK} {}\n", job.nonce);
                if job.reply.write_all(ok.as_bytes()).is_err() {
                    state.active.fetch_sub(1, Ordering::SeqCst);
                    continue;
                }
                let state = state.clone();
                let exports = s.join(EXPORTS);
                // The relay ends the `active` count; this thread makes
                // the slot anew once the shell holds its ends (`o`), or
                // the relay gave up.
                std::thread::spawn(move || {
                    let Job {
                        ends,
                        dst,
                        reply,
                        values,
                        opened,
                        nonce: _,
                    } = job;
                    let _ = relay(
                        ends,
                        dst,
                        reply,
                        b"",
                        move || {
                            // The shell holds the exports open: off the
                            // file system before the slot is made anew.
                            let _ = rustix::fs::unlink(&exports);
                            let _ = opened.send(());
                        },
                        b"",
                        values,
                    );
                    state.touch();
                    state.active.fetch_sub(1, Ordering::SeqCst);
                });
                let _ = rx.recv_timeout(super::protocol::OPEN_WAIT + Duration::from_secs(1));
            }
            None => {
                state.active.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }
}

/// Wait for a claimed slot's request line; `None` when the claim went
/// stale (the slot is then made anew).
fn wait_request(ctl: &OwnedFd, s: &Path) -> Option<Vec<u8>> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut line = Vec::new();
    let mut begun: Option<Instant> = None;
    loop {
        let wait = match begun {
            Some(t) => REQUEST_WAIT.saturating_sub(t.elapsed()),
            None => STALE_CLAIM,
        };
        if wait.is_zero() {
            return None;
        }
        let ts = Timespec::try_from(wait).unwrap_or_default();
        let mut fds = [PollFd::new(ctl, PollFlags::IN)];
        match poll(&mut fds, Some(&ts)) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(_) => return None,
        }
        if fds[0].revents().is_empty() {
            if begun.is_some() {
                return None;
            }
            // A claim with no request for this long: the shell is gone.
            let stale = std::fs::symlink_metadata(s.join(LOCK))
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE_CLAIM);
            if stale {
                return None;
            }
            continue;
        }
        let mut b = [0u8; 4096];
        match rustix::io::read(ctl, &mut b) {
            Ok(0) => {
                // A writer came and went without a line: start anew.
                if line.is_empty() {
                    return None;
                }
            }
            Ok(k) => {
                line.extend_from_slice(&b[..k]);
                begun.get_or_insert_with(Instant::now);
                if let Some(p) = line.iter().position(|&c| c == b'\n') {
                    line.truncate(p);
                    return Some(line);
                }
                if line.len() > 8192 {
                    return None;
                }
            }
            Err(Errno::INTR) | Err(Errno::AGAIN) => {}
            Err(_) => return None,
        }
    }
}

/// One command's relay, ready to run.
struct Job {
    ends: Ends,
    dst: [File; 2],
    reply: File,
    values: Vec<(String, Vec<u8>)>,
    opened: std::sync::mpsc::Sender<()>,
    nonce: String,
}

fn open_reply(s: &Path) -> Option<File> {
    let reply = rustix::fs::open(
        s.join(REPLY),
        OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )
    .ok()?;
    let _ = rustix::fs::fcntl_setfl(&reply, OFlags::WRONLY);
    Some(File::from(reply))
}

fn reply_no(s: &Path) -> Option<()> {
    open_reply(s)?.write_all(NO).ok()
}

/// Open what the request names; on any failure answer `no` (when the
/// reply FIFO opens) and give `None`. The requester is the process that
/// holds this slot's `c` open for writing at the descriptor it names
/// (checked through `/proc`, not taken on its word), and the daemon
/// writes only where that process itself may: its descriptors `O` and `E`
/// (open for writing) — never another process's, never a file it may only
/// read.
fn take(s: &Path, line: &[u8], ends: Ends, opened: std::sync::mpsc::Sender<()>) -> Option<Job> {
    let mut reply = open_reply(s)?;
    match parse_request(line).and_then(|r| {
        if !holds(r.pid, r.c, &ends.ctl) {
            return None;
        }
        let dst = [open_dst(r.pid, r.o)?, open_dst(r.pid, r.e)?];
        // A referenced value only from the value daemon: on a miss the
        // helper resolves it (and the value daemon is started for the
        // next command when it is gone).
        let Ok((prologue, values)) = super::entry::load_entry_held(&r.entry) else {
            if super::entry::holds_references(&r.entry) {
                start_value_daemon();
            }
            return None;
        };
        write_exports(&s.join(EXPORTS), &r.nonce, &prologue).ok()?;
        Some((dst, values, r.nonce))
    }) {
        Some((dst, values, nonce)) => Some(Job {
            ends,
            dst,
            reply,
            values,
            opened,
            nonce,
        }),
        None => {
            let _ = reply.write_all(NO);
            None
        }
    }
}

/// The exports, for the shell to read once its output goes into the
/// FIFOs: a new owner-only file in the slot (memory: `/dev/shm` or the
/// runtime directory), removed as soon as the shell holds it open. Its
/// first line is `: NONCE`, the shell's own, which the shell checks.
fn write_exports(path: &Path, nonce: &str, prologue: &[u8]) -> std::io::Result<()> {
    let _ = rustix::fs::unlink(path);
    let fd = rustix::fs::open(
        path,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut f = File::from(fd);
    f.write_all(format!(": {nonce}\n").as_bytes())?;
    f.write_all(prologue)
}

/// Does process `pid` hold `ctl`'s FIFO (this slot's `c`) open for
/// writing at its descriptor `fd`?
fn holds(pid: u32, fd: u32, ctl: &OwnedFd) -> bool {
    let (Ok(mine), Ok(theirs)) = (
        rustix::fs::fstat(ctl),
        rustix::fs::stat(format!("/proc/{pid}/fd/{fd}").as_str()),
    ) else {
        return false;
    };
    (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino)
        && fd_flags(pid, fd).is_some_and(writes)
}

/// The shell's saved stdout or stderr: a pipe or a character device, or
/// a regular file the shell writes in append mode (Claude Code's task
/// output file), opened here in append mode too. A file written at an
/// offset is not: a second open would not share the shell's offset.
fn open_dst(pid: u32, fd: u32) -> Option<File> {
    use rustix::fs::FileType;
    let p = format!("/proc/{pid}/fd/{fd}");
    let st = rustix::fs::stat(p.as_str()).ok()?;
    // Only a descriptor the shell may write itself (a pipe's read end, a
    // file opened to read, even with O_APPEND, is not reopened to write).
    let their = fd_flags(pid, fd)?;
    if !writes(their) {
        return None;
    }
    let flags = match FileType::from_raw_mode(st.st_mode) {
        FileType::Fifo | FileType::CharacterDevice => OFlags::WRONLY,
        FileType::RegularFile if their & OFlags::APPEND.bits() != 0 => {
            OFlags::WRONLY | OFlags::APPEND
        }
        _ => return None,
    };
    let f = rustix::fs::open(
        p.as_str(),
        flags | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    // The same file as the one looked at, and blocking from here on.
    let again = rustix::fs::fstat(&f).ok()?;
    if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) {
        return None;
    }
    rustix::fs::fcntl_setfl(&f, flags).ok()?;
    Some(File::from(f))
}

/// The open flags of `pid`'s descriptor `fd` (`flags:` in
/// `/proc/PID/fdinfo/FD`).
fn fd_flags(pid: u32, fd: u32) -> Option<u32> {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
}

/// Open for writing (`O_WRONLY` or `O_RDWR`)?
fn writes(flags: u32) -> bool {
    matches!(flags & 0o3, 0o1 | 0o2)
}
