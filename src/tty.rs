//! The controlling terminal read without echo, a byte at a time
//! ([`TtyReader`]): `agentenv set`'s prompt, its keys from the terminal's
//! own settings, and its settings put back on every way out.

use std::fs::File;
use std::io::{Read, Write};

/// Why the reader stopped: the exit status (1, or 130 when cancelled)
/// and a value-free message.
pub struct TtyError {
    pub code: i32,
    pub message: String,
}

/// Longest value accepted from the terminal.
const MAX_VALUE: usize = 64 * 1024;

impl TtyError {
    fn runtime(message: impl Into<String>) -> TtyError {
        TtyError {
            code: 1,
            message: message.into(),
        }
    }
}
/// The terminal in no-echo, byte-at-a-time mode while it lives; the saved
/// settings come back on drop (every return, a panic, and Ctrl-C, which
/// arrives as a byte because signals from the keyboard are off too).
pub struct TtyReader<'a> {
    tty: &'a File,
    /// The variable asked for (messages only).
    pub name: String,
    saved: rustix::termios::Termios,
    pending: Vec<u8>,
}

/// The keys the reader honours, from the terminal's own settings.
struct Keys {
    erase: u8,
    kill: u8,
    werase: u8,
    intr: u8,
    quit: u8,
    eof: u8,
}

impl<'a> TtyReader<'a> {
    pub fn new(tty: &'a File) -> Result<Self, TtyError> {
        use rustix::termios::{
            tcgetattr, tcsetattr, LocalModes, OptionalActions, SpecialCodeIndex,
        };
        let fail = |e: rustix::io::Errno| {
            TtyError::runtime(format!(
                "set: cannot set up the terminal: {}",
                crate::fsutil::io_kind(&e.into())
            ))
        };
        let saved = tcgetattr(tty).map_err(fail)?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(
            LocalModes::ECHO
                | LocalModes::ECHONL
                | LocalModes::ICANON
                | LocalModes::ISIG
                | LocalModes::IEXTEN,
        );
        quiet.special_codes[SpecialCodeIndex::VMIN] = 1;
        quiet.special_codes[SpecialCodeIndex::VTIME] = 0;
        restore_on_signal(tty, &saved)?;
        tcsetattr(tty, OptionalActions::Flush, &quiet).map_err(fail)?;
        Ok(TtyReader {
            tty,
            name: String::new(),
            saved,
            pending: Vec::new(),
        })
    }

    fn keys(&self) -> Keys {
        use rustix::termios::SpecialCodeIndex as I;
        let c = &self.saved.special_codes;
        let or = |v: u8, d: u8| if v == 0 { d } else { v };
        Keys {
            erase: or(c[I::VERASE], 0x7f),
            kill: or(c[I::VKILL], 0x15),
            werase: or(c[I::VWERASE], 0x17),
            intr: or(c[I::VINTR], 0x03),
            quit: or(c[I::VQUIT], 0x1c),
            eof: or(c[I::VEOF], 0x04),
        }
    }

    /// Whether more input is already there, or arrives within 50 ms, after
    /// the end of a line: a paste, not a person pressing Enter.
    fn more_follows(&self) -> bool {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        if !self.pending.is_empty() {
            return true;
        }
        let mut fds = [PollFd::new(self.tty, PollFlags::IN)];
        let wait = Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        matches!(poll(&mut fds, Some(&wait)), Ok(n) if n > 0)
    }

    /// Read and drop the rest of a paste (until 50 ms pass without input).
    fn discard_paste(&mut self) {
        self.pending.fill(0);
        self.pending.clear();
        let mut tty = self.tty;
        while self.more_follows() {
            let mut buf = [0u8; 512];
            match tty.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => buf.fill(0),
            }
        }
    }

    /// Print `prompt`, read one line without echo; Ctrl-C (or Ctrl-D on an
    /// empty line) cancels with exit 130.
    pub fn read_hidden(&mut self, prompt: &str) -> Result<Vec<u8>, TtyError> {
        let k = self.keys();
        let mut tty = self.tty;
        let _ = tty.write_all(prompt.as_bytes());
        let _ = tty.flush();
        let mut line: Vec<u8> = Vec::new();
        let cancelled = || TtyError {
            code: 130,
            message: "set: cancelled; nothing written".into(),
        };
        loop {
            if self.pending.is_empty() {
                let mut buf = [0u8; 512];
                let n = match tty.read(&mut buf) {
                    Ok(0) => {
                        line.fill(0);
                        return Err(cancelled());
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        line.fill(0);
                        return Err(TtyError::runtime(format!(
                            "set: cannot read the terminal: {}",
                            crate::fsutil::io_kind(&e)
                        )));
                    }
                };
                self.pending.extend_from_slice(&buf[..n]);
                buf.fill(0);
            }
            let b = self.pending.remove(0);
            match b {
                b'\r' | b'\n' => {
                    if b == b'\r' && self.pending.first() == Some(&b'\n') {
                        self.pending.remove(0);
                    }
                    let _ = tty.write_all(b"\r\n");
                    if self.more_follows() {
                        // A paste of several lines: the first line would be
                        // the value and the second its confirmation.
                        line.fill(0);
                        self.discard_paste();
                        return Err(TtyError::runtime(format!(
                            "set: the value pasted for {name} spans several lines, and set reads one line; \
                             put a multi-line value (a PEM key) into the store file by hand, inside single quotes \
                             ({name}='-----BEGIN …' over several lines), or keep it in a file of its own and store its path; nothing written",
                            name = self.name
                        )));
                    }
                    return Ok(line);
                }
                b if b == k.intr || b == k.quit || (b == k.eof && line.is_empty()) => {
                    let _ = tty.write_all(b"\r\n");
                    line.fill(0);
                    self.pending.fill(0);
                    return Err(cancelled());
                }
                b if b == k.eof => {}
                b if b == k.erase || b == 0x08 => {
                    // One character: a UTF-8 lead byte and its continuations.
                    while let Some(c) = line.pop() {
                        if c & 0xc0 != 0x80 {
                            break;
                        }
                    }
                }
                b if b == k.kill => {
                    line.fill(0);
                    line.clear();
                }
                b if b == k.werase => {
                    while line.last().is_some_and(|c| *c == b' ') {
                        line.pop();
                    }
                    while line.last().is_some_and(|c| *c != b' ') {
                        line.pop();
                    }
                }
                0x1a => {} // Ctrl-Z: no suspending with the terminal quiet
                b => {
                    if line.len() >= MAX_VALUE {
                        line.fill(0);
                        return Err(TtyError::runtime(format!(
                            "set: the value is longer than {} KiB; nothing written",
                            MAX_VALUE / 1024
                        )));
                    }
                    line.push(b);
                }
            }
        }
    }
}

/// SIGTERM, SIGHUP (and SIGINT, SIGQUIT from elsewhere: the keyboard's
/// arrive as bytes) while the terminal is quiet: put its settings back,
/// then end as the signal would have (128 + N). Nothing was written yet
/// at the prompt; after it, the write is a temp file + rename, so an end
/// half-way leaves the store file as it was.
fn restore_on_signal(tty: &File, saved: &rustix::termios::Termios) -> Result<(), TtyError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let fail = |e: std::io::Error| {
        TtyError::runtime(format!(
            "set: cannot set up the terminal: {}",
            crate::fsutil::io_kind(&e)
        ))
    };
    let mut signals =
        signal_hook::iterator::Signals::new([SIGHUP, SIGINT, SIGQUIT, SIGTERM]).map_err(fail)?;
    let fd = tty.try_clone().map_err(fail)?;
    let saved = saved.clone();
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let _ = rustix::termios::tcsetattr(&fd, rustix::termios::OptionalActions::Now, &saved);
            let _ = (&fd).write_all(b"\r\n");
            crate::error!("set: ended by a signal; nothing written");
            std::process::exit(128 + sig);
        }
    });
    Ok(())
}

impl Drop for TtyReader<'_> {
    fn drop(&mut self) {
        self.pending.fill(0);
        let _ = rustix::termios::tcsetattr(
            self.tty,
            rustix::termios::OptionalActions::Now,
            &self.saved,
        );
    }
}
