//! Streaming: [`MaskWriter`] (bytes in, masked bytes out) and [`pump`]
//! (a file descriptor through a writer, with the idle release).

use super::Masker;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the tail of an unfinished line may wait for more bytes before
/// [`pump`] releases it (so a prompt appears).
pub const IDLE: Duration = Duration::from_millis(50);

/// The pipe size [`pump`] asks for, and its read size.
const PIPE_SIZE: usize = 1 << 20;

/// After the child has exited, how long [`pump`] keeps reading a stream
/// that a descendant still holds open while nothing new arrives.
const DRAIN_IDLE: Duration = Duration::from_millis(100);

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// A writer that masks what goes through it into `inner`.
///
/// Every `write` releases at once everything that is decided: each
/// complete line (no needle spans a line end), and the part of an
/// unfinished line before the first byte that could still begin a match.
/// The rest (shorter than the longest needle) is held until more bytes
/// decide it, [`MaskWriter::release_pending`], or [`MaskWriter::finish`].
/// The output equals [`Masker::mask`] of everything written, however the
/// input was split, as long as `release_pending` is not called in between.
pub struct MaskWriter<W: Write> {
    masker: Arc<Masker>,
    inner: W,
    pending: Vec<u8>,
    out: Vec<u8>,
    /// The first held byte (or, with none held, the next byte written)
    /// starts a line: a line that may be JSON is then held whole, so the
    /// masker sees it whole and keeps it JSON ([`Masker::mask_into`]).
    line_start: bool,
}

/// The longest unfinished line held whole because it may be JSON; past
/// this, its decided part is released as for any line (and a JSON line
/// longer than this may lose its JSON rule's quotes).
const JSON_HOLD_MAX: usize = 8 << 20;

/// Could `t`, the start of a line, still be the start of a JSON text
/// (whitespace, then `{`, `[`, `"`, `-`, a digit, or a prefix of `true`,
/// `false`, `null`)?
fn may_be_json(t: &[u8]) -> bool {
    let t = t.trim_ascii_start();
    match t.first() {
        None => true,
        Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9') => true,
        Some(_) => {
            let t = t.trim_ascii_end();
            [&b"true"[..], b"false", b"null"]
                .iter()
                .any(|w| w.starts_with(t))
        }
    }
}

impl<W: Write> MaskWriter<W> {
    /// A writer masking with `masker` into `inner`.
    pub fn new(masker: Arc<Masker>, inner: W) -> Self {
        MaskWriter {
            masker,
            inner,
            pending: Vec::new(),
            out: Vec::new(),
            line_start: true,
        }
    }

    /// Bytes are held back (the tail of an unfinished line that may still
    /// turn into a match).
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Mask and write the held tail as it is (a value split around this
    /// call is not masked), then flush.
    pub fn release_pending(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let mut out = std::mem::take(&mut self.out);
            out.clear();
            self.masker
                .mask_after(&self.pending, !self.line_start, &mut out);
            self.pending.clear();
            self.line_start = false;
            let r = self.inner.write_all(&out);
            self.out = out;
            r?;
        }
        self.inner.flush()
    }

    /// Release what is held and hand back the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.release_pending()?;
        Ok(self.inner)
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Mask `data` (appended to what is held) into `self.out`.
    fn feed(&mut self, data: &[u8]) {
        let m = &*self.masker;
        let out = &mut self.out;
        if m.is_empty() {
            out.extend_from_slice(data);
            return;
        }
        let mut data = data;
        if !self.pending.is_empty() {
            // Join the held tail with the rest of its line.
            match data.iter().position(|&b| is_line_end(b)) {
                Some(i) => {
                    self.pending.extend_from_slice(&data[..=i]);
                    m.mask_after(&self.pending, !self.line_start, out);
                    self.pending.clear();
                    self.line_start = true;
                    data = &data[i + 1..];
                }
                None => {
                    self.pending.extend_from_slice(data);
                    let joined = std::mem::take(&mut self.pending);
                    self.hold_tail(&joined);
                    return;
                }
            }
        }
        let cut = data
            .iter()
            .rposition(|&b| is_line_end(b))
            .map_or(0, |i| i + 1);
        m.mask_into(&data[..cut], out);
        if cut > 0 {
            self.line_start = true;
        }
        self.hold_tail(&data[cut..]);
    }

    /// The tail of an unfinished line (nothing held): mask and release its
    /// decided part, hold the rest. A tail that starts a line and may be
    /// JSON is held whole (up to [`JSON_HOLD_MAX`]).
    fn hold_tail(&mut self, tail: &[u8]) {
        if self.line_start && tail.len() <= JSON_HOLD_MAX && may_be_json(tail) {
            self.pending.extend_from_slice(tail);
            return;
        }
        let hold = self.masker.mask_decided(tail, &mut self.out);
        if hold > 0 {
            self.line_start = false;
        }
        self.pending.extend_from_slice(&tail[hold..]);
    }
}

impl<W: Write> Write for MaskWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.clear();
        self.feed(buf);
        if !self.out.is_empty() {
            let r = self.inner.write_all(&self.out);
            self.out.clear();
            r?;
        }
        Ok(buf.len())
    }

    /// Flushes the inner writer; held bytes stay held (see
    /// [`MaskWriter::release_pending`]).
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A writer on a file descriptor this process shares (its stdout or
/// stderr) that waits when the descriptor is non-blocking and full (a
/// parent such as node may have set `O_NONBLOCK` on it), rather than
/// failing with `WouldBlock`.
pub(crate) struct FdOut(pub(crate) std::fs::File);

impl Write for FdOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        use rustix::event::{poll, PollFd, PollFlags};
        loop {
            match self.0.write(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let mut fds = [PollFd::new(&self.0, PollFlags::OUT)];
                    match poll(&mut fds, None) {
                        Ok(_) | Err(rustix::io::Errno::INTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                r => return r,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Read `src` to its end through `w`, flushing after every read, and
/// release the held tail after [`IDLE`] without new bytes.
///
/// `stop` (optional) becomes readable or hung up when the producer has
/// exited: from then on the stream is read while bytes keep coming, and
/// left when it ends or stays idle for 100 ms (a descendant that
/// outlives the command and keeps the stream open does not hold the
/// caller). At the end the held tail is released.
///
/// An error writing to `w` ends the pump with that error; the caller then
/// drops `src`, so the producer sees a closed pipe, as it would have
/// without the masker.
pub fn pump<W: Write>(
    src: impl AsFd,
    w: &mut MaskWriter<W>,
    stop: Option<std::os::fd::BorrowedFd<'_>>,
) -> io::Result<()> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let src = src.as_fd();
    // A pipe of 1 MiB (the unprivileged maximum by default) rather than
    // 64 KiB: a fast producer fills it while the masker works, and each
    // read takes up to the whole buffer (fewer reads, writes and
    // wake-ups). Not a pipe, or not allowed: it stays as it is.
    let _ = rustix::pipe::fcntl_setpipe_size(src, PIPE_SIZE);
    let mut buf = vec![0u8; PIPE_SIZE];
    let mut last = Instant::now();
    // Since when the producer is gone (draining), if it is.
    let mut stopped: Option<Instant> = None;
    let mut stop = stop;
    loop {
        let now = Instant::now();
        let deadline = if w.has_pending() {
            Some(last + IDLE)
        } else {
            stopped.map(|s| s.max(last) + DRAIN_IDLE)
        };
        let ts = deadline
            .map(|d| Timespec::try_from(d.saturating_duration_since(now)).unwrap_or_default());
        let mut fds = [
            PollFd::new(&src, PollFlags::IN),
            match stop {
                Some(ref s) => PollFd::new(s, PollFlags::IN),
                None => PollFd::new(&src, PollFlags::empty()),
            },
        ];
        let n = if stop.is_some() { 2 } else { 1 };
        match poll(&mut fds[..n], ts.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let src_ready = !fds[0].revents().is_empty();
        if n == 2 && !fds[1].revents().is_empty() {
            stopped = Some(Instant::now());
            stop = None;
        }
        if src_ready {
            match rustix::io::read(src, &mut buf) {
                Ok(0) => break,
                Ok(k) => {
                    w.write_all(&buf[..k])?;
                    w.flush()?;
                    last = Instant::now();
                }
                Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
                Err(e) => return Err(e.into()),
            }
            continue;
        }
        let now = Instant::now();
        if w.has_pending() {
            if now >= last + IDLE {
                w.release_pending()?;
            }
        } else if let Some(s) = stopped {
            if now >= s.max(last) + DRAIN_IDLE {
                break;
            }
        }
    }
    w.release_pending()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masker(pairs: &[(&str, &[u8])]) -> Arc<Masker> {
        Arc::new(Masker::new(
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_vec())),
        ))
    }

    fn chunked(m: &Arc<Masker>, input: &[u8], sizes: &[usize]) -> Vec<u8> {
        let mut w = MaskWriter::new(m.clone(), Vec::new());
        let mut rest = input;
        let mut i = 0;
        while !rest.is_empty() {
            let n = sizes[i % sizes.len()].clamp(1, rest.len());
            w.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
            i += 1;
        }
        w.finish().unwrap()
    }

    #[test]
    fn split_at_every_offset_equals_whole() {
        let m = masker(&[("TOKEN", b"s3cr3t-t0ken"), ("LONG", b"s3cr3t-t0ken-longer")]);
        let input = b"pre s3cr3t-t0ken mid czNjcjN0LXQwa2Vu s3cr3t-t0ken-longer\nand s3cr3t-t0k";
        let whole = m.mask(input);
        for a in 0..input.len() {
            for b in a..input.len() {
                let mut w = MaskWriter::new(m.clone(), Vec::new());
                w.write_all(&input[..a]).unwrap();
                w.write_all(&input[a..b]).unwrap();
                w.write_all(&input[b..]).unwrap();
                assert_eq!(w.finish().unwrap(), whole, "split at {a}/{b}");
            }
        }
        assert_eq!(chunked(&m, input, &[1]), whole);
    }

    /// A JSON line in pieces is held whole, so it stays JSON whatever the
    /// split; the pieces of other lines go out as before.
    #[test]
    fn a_json_line_split_anywhere_stays_json() {
        let m = masker(&[("PORT", b"3000"), ("TOKEN", b"ghp_abcdefgh")]);
        let input = b"{\"port\":3000,\"t\":\"ghp_abcdefgh\"}\n[3000]\r\n3000\nx 3000 y";
        let whole = m.mask(input);
        assert_eq!(
            String::from_utf8_lossy(&whole),
            "{\"port\":\"[REDACTED:PORT]\",\"t\":\"[REDACTED:TOKEN]\"}\n[\"[REDACTED:PORT]\"]\r\n\"[REDACTED:PORT]\"\nx [REDACTED:PORT] y"
        );
        for a in 0..input.len() {
            for b in a..input.len() {
                let mut w = MaskWriter::new(m.clone(), Vec::new());
                w.write_all(&input[..a]).unwrap();
                w.write_all(&input[a..b]).unwrap();
                w.write_all(&input[b..]).unwrap();
                assert_eq!(w.finish().unwrap(), whole, "split at {a}/{b}");
            }
        }
        // A prompt that is not JSON still goes out at once.
        let mut w = MaskWriter::new(m.clone(), Vec::new());
        w.write_all(b"Password: ").unwrap();
        assert_eq!(w.get_ref(), b"Password: ");
        // A JSON-looking start is held until its line ends.
        let mut w = MaskWriter::new(m, Vec::new());
        w.write_all(b"{\"a\": 1, ").unwrap();
        assert!(w.get_ref().is_empty() && w.has_pending());
        w.write_all(b"\"b\": 3000}\n").unwrap();
        assert_eq!(w.get_ref(), b"{\"a\": 1, \"b\": \"[REDACTED:PORT]\"}\n");
    }

    #[test]
    fn a_line_without_a_possible_match_is_released_at_once() {
        let m = masker(&[("TOKEN", b"s3cr3t-t0ken")]);
        let mut w = MaskWriter::new(m, Vec::new());
        w.write_all(b"Password: ").unwrap();
        assert_eq!(w.get_ref(), b"Password: ");
        assert!(!w.has_pending());
        w.write_all(b"xx s3cr").unwrap();
        assert_eq!(w.get_ref(), b"Password: xx ");
        assert!(w.has_pending());
        w.release_pending().unwrap();
        assert_eq!(w.get_ref(), b"Password: xx s3cr");
    }

    #[test]
    fn binary_passes_unchanged() {
        let m = masker(&[("TOKEN", b"s3cr3t-t0ken")]);
        let input: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        assert_eq!(chunked(&m, &input, &[7, 300, 1]), input);
    }

    #[test]
    fn pump_reads_to_the_end_and_releases() {
        let m = masker(&[("TOKEN", b"s3cr3t-t0ken")]);
        let (r, mut wr) = std::io::pipe().unwrap();
        let t = std::thread::spawn(move || {
            wr.write_all(b"a s3cr3t-").unwrap();
            std::thread::sleep(Duration::from_millis(5));
            wr.write_all(b"t0ken b\nlast s3").unwrap();
        });
        let mut w = MaskWriter::new(m, Vec::new());
        pump(&r, &mut w, None).unwrap();
        t.join().unwrap();
        assert_eq!(w.get_ref(), b"a [REDACTED:TOKEN] b\nlast s3");
    }
}
