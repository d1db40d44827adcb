//! The per-user value cache: resolved values in one process's memory for
//! `AGENTENV_REF_TTL` seconds, never on disk.
//!
//! - Where: `agentenv-refs-v1-UID/` (0700, ours, not a link) beside the
//!   masking daemon's directory: in `$XDG_RUNTIME_DIR`, else `/dev/shm`
//!   (not on the portable path), else a temp dir nobody else can rename
//!   it in ([`dir`]); a Unix socket `sock` in it. The server checks each peer's uid
//!   (`SO_PEERCRED`) and answers only its own user.
//! - Keys are 32-byte hashes (`refs::key_of`): the daemon never learns a
//!   reference, an address or a file name.
//! - Protocol, one request per connection, hex on lines: `G KEY…` →
//!   per key `H AGE_MS VALUE` or `M`; `P TTL_MS KEY VALUE` (one line per
//!   pair) → `K`.
//! - The server (`agentenv __refs-daemon`, started detached by the first
//!   load that resolved something, or by the masking daemon when a
//!   wrapped command's entry holds references: [`spawn`]) holds a
//!   lock so one runs per user; it is not dumpable (no core file, no
//!   ptrace by other processes of the user), and leaves once nothing is
//!   left to hold and no request came for a minute.

use crate::platform::private_dir;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a client waits for the daemon.
const CLIENT_WAIT: Duration = Duration::from_millis(500);
/// The daemon leaves when it holds nothing and was idle this long.
const IDLE_EXIT: Duration = Duration::from_secs(60);
/// The argument that runs the server.
pub(crate) const SERVE_ARG: &str = "__refs-daemon";

/// Bytes as lower-case hex (also the agent hooks' cache entries).
pub(crate) fn hex(b: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(H[(x >> 4) as usize] as char);
        s.push(H[(x & 15) as usize] as char);
    }
    s
}

/// [`hex`] read back; `None` for anything else.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The daemon's directory, in the first place a directory of ours may go
/// ([`crate::platform::base_dirs`], as the masking daemon's FIFOs):
/// `$XDG_RUNTIME_DIR` when it is ours and private; else `/dev/shm` (not
/// on the portable path: macOS and FreeBSD have none); else the temp dir
/// (`$TMPDIR`), each only when nobody else can rename our directory away
/// in it.
pub(crate) fn dir() -> Option<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let base = crate::platform::base_dirs().into_iter().next()?;
    Some(base.join(format!("agentenv-refs-v1-{uid}")))
}

/// A connection to the running daemon.
pub(crate) struct Client {
    sock: PathBuf,
}

impl Client {
    /// The daemon, when one is running in a private directory.
    pub(crate) fn new() -> Option<Client> {
        let d = dir()?;
        if !private_dir(&d) {
            return None;
        }
        let sock = d.join("sock");
        // Probe: a connection that works.
        UnixStream::connect(&sock).ok()?;
        Some(Client { sock })
    }

    fn ask(&self, request: &str) -> Option<Vec<String>> {
        let mut s = UnixStream::connect(&self.sock).ok()?;
        s.set_read_timeout(Some(CLIENT_WAIT)).ok()?;
        s.set_write_timeout(Some(CLIENT_WAIT)).ok()?;
        s.write_all(request.as_bytes()).ok()?;
        s.shutdown(std::net::Shutdown::Write).ok()?;
        let lines: Result<Vec<String>, _> = BufReader::new(s).lines().collect();
        lines.ok()
    }

    /// Each key's value and age, when the daemon holds it.
    pub(crate) fn get(&self, keys: &[[u8; 32]]) -> Vec<Option<(Vec<u8>, Duration)>> {
        let mut req = String::from("G");
        for k in keys {
            req.push(' ');
            req.push_str(&hex(k));
        }
        req.push('\n');
        let Some(lines) = self.ask(&req).filter(|l| l.len() == keys.len()) else {
            return vec![None; keys.len()];
        };
        lines
            .iter()
            .map(|l| {
                let mut w = l.split(' ');
                match (w.next(), w.next(), w.next()) {
                    (Some("H"), Some(age), Some(v)) => {
                        Some((unhex(v)?, Duration::from_millis(age.parse().ok()?)))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// Keep `pairs` for `ttl`.
    pub(crate) fn put(&self, pairs: &[([u8; 32], Vec<u8>)], ttl: Duration) {
        let _ = self.ask(&put_request(pairs, ttl));
    }
}

fn put_request(pairs: &[([u8; 32], Vec<u8>)], ttl: Duration) -> String {
    let mut req = String::new();
    for (k, v) in pairs {
        req.push_str(&format!("P {} {} {}\n", ttl.as_millis(), hex(k), hex(v)));
    }
    req
}

/// Start the daemon, detached (it exits at once when one runs already):
/// the child, to reap or to drop; `None` when it cannot start or
/// `AGENTENV_NO_DAEMON` is set.
pub(crate) fn spawn() -> Option<std::process::Child> {
    if crate::core::get(&crate::core::process_env(), "AGENTENV_NO_DAEMON")
        .is_some_and(|v| !v.is_empty() && v != "0")
    {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    std::process::Command::new(exe)
        .arg(SERVE_ARG)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()
}

/// Start the daemon (detached) and hand it `pairs` once it listens (for
/// at most [`CLIENT_WAIT`]); nothing when it cannot start.
pub(crate) fn start_and_put(pairs: &[([u8; 32], Vec<u8>)], ttl: Duration) {
    let Some(child) = spawn() else { return };
    // The daemon outlives this load: whoever adopts it reaps it.
    drop(child);
    let until = Instant::now() + CLIENT_WAIT;
    while Instant::now() < until {
        if let Some(c) = Client::new() {
            c.put(pairs, ttl);
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

struct Held {
    value: Vec<u8>,
    fetched: Instant,
    until: Instant,
}

/// Is the peer of `s` a process of our uid? Linux asks the kernel
/// (`SO_PEERCRED`); elsewhere (macOS, FreeBSD: no `SO_PEERCRED` in
/// rustix) the socket's owner-only `0700` directory is what keeps other
/// users out (docs/platforms.md).
#[cfg(target_os = "linux")]
fn peer_is_us(s: &UnixStream) -> bool {
    let uid = rustix::process::geteuid();
    matches!(rustix::net::sockopt::socket_peercred(s), Ok(cred) if cred.uid == uid)
}

#[cfg(not(target_os = "linux"))]
fn peer_is_us(_: &UnixStream) -> bool {
    true
}

/// Answer one connection (a peer of our uid only).
fn serve_one(s: UnixStream, held: &mut HashMap<Vec<u8>, Held>) {
    if !peer_is_us(&s) {
        return;
    }
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
    let Ok(reader) = s.try_clone() else { return };
    let mut out = String::new();
    let now = Instant::now();
    held.retain(|_, h| h.until > now);
    for line in BufReader::new(reader).take(64 << 20).lines() {
        let Ok(line) = line else { return };
        let mut w = line.split(' ');
        match w.next() {
            Some("G") => {
                for k in w {
                    match unhex(k).and_then(|k| held.get(&k)) {
                        Some(h) => out.push_str(&format!(
                            "H {} {}\n",
                            now.duration_since(h.fetched).as_millis(),
                            hex(&h.value)
                        )),
                        None => out.push_str("M\n"),
                    }
                }
            }
            Some("P") => {
                let (Some(ttl), Some(k), Some(v)) = (w.next(), w.next(), w.next()) else {
                    continue;
                };
                let (Ok(ttl), Some(k), Some(v)) = (ttl.parse::<u64>(), unhex(k), unhex(v)) else {
                    continue;
                };
                held.insert(
                    k,
                    Held {
                        value: v,
                        fetched: now,
                        until: now + Duration::from_millis(ttl),
                    },
                );
                out.push_str("K\n");
            }
            _ => {}
        }
    }
    let mut s = s;
    let _ = s.write_all(out.as_bytes());
}

/// `agentenv __refs-daemon`: serve until idle. Prints nothing; exits 0
/// when another daemon holds the lock.
pub(crate) fn serve() -> i32 {
    use rustix::fs::{FlockOperation, Mode, OFlags, CWD};
    let _ = rustix::process::setsid();
    let _ = std::env::set_current_dir("/");
    // No core dump, no ptrace by the user's other processes (Linux's
    // prctl; elsewhere the platform's defaults).
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    let Some(d) = dir() else { return 1 };
    match rustix::fs::mkdirat(CWD, &d, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(_) => return 1,
    }
    if !private_dir(&d) {
        return 1;
    }
    let Ok(lock) = rustix::fs::open(
        d.join("lock"),
        OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::from_raw_mode(0o600),
    ) else {
        return 1;
    };
    if rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
        return 0;
    }
    let sock = d.join("sock");
    let _ = std::fs::remove_file(&sock);
    let Ok(listener) = UnixListener::bind(&sock) else {
        return 1;
    };
    let _ = listener.set_nonblocking(true);
    let mut held: HashMap<Vec<u8>, Held> = HashMap::new();
    let mut last = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => {
                let _ = s.set_nonblocking(false);
                serve_one(s, &mut held);
                last = Instant::now();
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut fds = [rustix::event::PollFd::new(
                    &listener,
                    rustix::event::PollFlags::IN,
                )];
                let ts = rustix::event::Timespec {
                    tv_sec: 1,
                    tv_nsec: 0,
                };
                let _ = rustix::event::poll(&mut fds, Some(&ts));
                let now = Instant::now();
                held.retain(|_, h| h.until > now);
                if held.is_empty() && now.duration_since(last) > IDLE_EXIT {
                    break;
                }
                // Our socket was removed or replaced: leave.
                if !sock.exists() {
                    break;
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    let _ = std::fs::remove_file(&sock);
    0
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_round_trip() {
        let v = vec![0u8, 1, 0xfe, b'\n'];
        assert_eq!(super::unhex(&super::hex(&v)).unwrap(), v);
        assert!(super::unhex("abc").is_none());
    }
}
