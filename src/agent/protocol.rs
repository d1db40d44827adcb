//! The wire between a rewritten command's shell ([`FUNCTIONS`]) and the
//! daemon or the per-command helper, in one place: every token both sides
//! use, and every timeout. The shell side is text; the test below checks
//! that it spells each token as written here.
//!
//! | step | shell | agentenv |
//! |---|---|---|
//! | claim a slot | `set -C; true > DIR/N/lock`, N in `0 …` [`SLOTS`]−1 | [`LOCK`] removed when the slot is made anew; a claim with no request for [`STALE_CLAIM`] is cleared |
//! | request | one line on [`CTL`]: `PID O E C NONCE CLIENT ENTRY` ([`parse_request`]) | read within [`REQUEST_WAIT`] once begun; the requester checked through `/proc` |
//! | reply | read on [`REPLY`], at most [`SHELL_REPLY_WAIT`] | `ok NONCE` ([`OK`]; exports in [`EXPORTS`]) or [`NO`] (the shell starts the helper) |
//! | exports | a first line `: NONCE`, then `read -d ''` on [`EXPORTS`] (helper: its pipe) | the `export` lines, ended by NUL ([`EXPORTS_END`]) |
//! | output | stdout, stderr into [`OUT`], [`ERR`] | masked onto the shell's own |
//! | control | [`OPENED`] once the FIFOs are open; [`DONE`] from the EXIT trap | the relay drains, [`DRAIN_IDLE`] at most once the open streams are quiet, then the go-on line |
//!
//! [`FUNCTIONS`]: super::hook::FUNCTIONS
//! [`DRAIN_IDLE`]: crate::mask::DRAIN_IDLE

use std::path::PathBuf;
use std::time::Duration;

/// Slots, so this many shells can hand a command over at the same moment
/// (a slot is busy only for the handshake).
pub const SLOTS: usize = 8;

/// A slot's files: the control FIFO, the command's stdout and stderr
/// FIFOs, the replies FIFO, the exports file, the claim.
pub const CTL: &str = "c";
pub const OUT: &str = "o";
pub const ERR: &str = "e";
pub const REPLY: &str = "r";
pub const EXPORTS: &str = "v";
pub const LOCK: &str = "lock";
/// Every file of a slot, removed when the daemon leaves.
pub const SLOT_FILES: [&str; 6] = [CTL, OUT, ERR, REPLY, EXPORTS, LOCK];

/// The daemon's replies to a request, one line each: `ok NONCE` (the
/// shell's own number back), or `no`.
pub const OK: &str = "ok";
pub const NO: &[u8] = b"no\n";

/// The shell's control bytes: its FIFOs are open; the command is done.
pub const OPENED: u8 = b'o';
pub const DONE: u8 = b'x';

/// The byte that ends the exports.
pub const EXPORTS_END: u8 = 0;

/// How long the shell waits for the daemon's reply (`read -t`; only the
/// shell text uses it, the test checks that it says so).
#[cfg(test)]
pub const SHELL_REPLY_WAIT: Duration = Duration::from_secs(5);
/// How long a request line may take to arrive once it has begun.
pub const REQUEST_WAIT: Duration = Duration::from_secs(2);
/// A claim with no request after this long is cleared.
pub const STALE_CLAIM: Duration = Duration::from_secs(30);
/// How long the shell may take to open the FIFOs.
pub const OPEN_WAIT: Duration = Duration::from_secs(20);
/// Idle time after which the daemon leaves.
pub const IDLE_EXIT: Duration = Duration::from_secs(15 * 60);

/// A shell's request line.
pub struct Request {
    pub pid: u32,
    /// The descriptors of its saved stdout and stderr.
    pub o: u32,
    pub e: u32,
    /// Its descriptor of this slot's `c`.
    pub c: u32,
    /// A number of its own the answers carry.
    pub nonce: String,
    pub entry: PathBuf,
}

/// `PID O E C NONCE CLIENT ENTRY` (the entry is the rest of the line).
pub fn parse_request(line: &[u8]) -> Option<Request> {
    use std::os::unix::ffi::OsStrExt;
    let mut it = line.splitn(7, |&c| c == b' ');
    let num = |b: &[u8]| std::str::from_utf8(b).ok()?.parse::<u32>().ok();
    let pid = num(it.next()?)?;
    let o = num(it.next()?)?;
    let e = num(it.next()?)?;
    let c = num(it.next()?)?;
    let nonce = it
        .next()
        .filter(|n| !n.is_empty() && n.len() <= 64 && n.iter().all(u8::is_ascii_digit))?;
    let nonce = String::from_utf8(nonce.to_vec()).ok()?;
    let _client = it.next()?;
    let entry = it.next().filter(|p| p.starts_with(b"/"))?;
    Some(Request {
        pid,
        o,
        e,
        c,
        nonce,
        entry: PathBuf::from(std::ffi::OsStr::from_bytes(entry)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_spells_every_token_as_the_daemon_does() {
        let f = super::super::hook::FUNCTIONS;
        let slots: Vec<String> = (0..SLOTS).map(|i| i.to_string()).collect();
        let wants = [
            format!("for __ae_i in {}; do", slots.join(" ")),
            format!("true >\"$__ae_p/$__ae_i/{LOCK}\""),
            format!("[ -p \"$__ae_d/{CTL}\" ]"),
            format!("{{__ae_s}}<>\"$__ae_d/{REPLY}\" {{__ae_c}}<>\"$__ae_d/{CTL}\""),
            format!("exec {{__ae_v}}<\"$__ae_d/{EXPORTS}\""),
            format!("exec >\"$__ae_d/{OUT}\" 2>\"$__ae_d/{ERR}\""),
            format!("{{__ae_c}}>\"$__ae_d/{CTL}\" >\"$__ae_d/{OUT}\" 2>\"$__ae_d/{ERR}\""),
            format!("read -r -t {} -u $__ae_s", SHELL_REPLY_WAIT.as_secs()),
            format!("[ \"$__ae_x\" = \"{OK} $__ae_k\" ]"),
            format!("printf {} >&$__ae_c", OPENED as char),
            format!("printf {} >&$__ae_c", DONE as char),
            "read -r -d '' -u $__ae_v __ae_x".to_string(),
            "printf '%s %s %s %s %s %s %s\\n' \"$__ae_x\" \"$__ae_o\" \"$__ae_e\" \"$__ae_c\" \"$__ae_k\" \"$2\" \"$3\"".to_string(),
        ];
        for want in wants {
            assert!(f.contains(&want), "the shell text lacks: {want}");
        }
        assert_eq!(EXPORTS_END, 0, "read -d '' ends at NUL");
    }

    #[test]
    fn a_request_line_is_read_as_the_shell_writes_it() {
        let r = parse_request(b"12 10 11 13 4711 claude /c/e x").unwrap();
        assert_eq!((r.pid, r.o, r.e, r.c), (12, 10, 11, 13));
        assert_eq!(
            (r.nonce.as_str(), r.entry),
            ("4711", PathBuf::from("/c/e x"))
        );
        assert!(parse_request(b"12 10 11 13 4711 claude rel").is_none());
        assert!(parse_request(b"12 10 11 13 x1 claude /e").is_none());
    }
}
