//! Streaming: [`MaskWriter`] (bytes in, masked bytes out) and [`Pump`]
//! (file descriptors through writers in one `poll` loop: the idle
//! release, the drain after the producer is done), with every timing and
//! size of the streaming policy in one place.

use super::Masker;
use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the tail of an unfinished line may wait for more bytes before
/// a [`Pump`] releases it (so a prompt appears).
pub const IDLE: Duration = Duration::from_millis(50);

/// Once the producer is done (the command exited), how long a [`Pump`]
/// keeps reading streams that a descendant still holds open while
/// nothing new arrives: the shell's go-on line (the relay), `exec
/// --redact`'s exit.
pub const DRAIN_IDLE: Duration = Duration::from_millis(100);

/// The pipe size [`Pump::grown_source`] asks for and then the read size (Linux's
/// default pipe-max-size, the unprivileged maximum); `exec --redact`
/// asks it for its own stdout too.
pub(crate) const PIPE_SIZE: usize = 1 << 20;

/// A read's size when the pipes keep their size (the relay's FIFOs).
const READ_SIZE: usize = 64 << 10;

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

/// Where a [`Pump`]'s masker comes from: given, or built from the values
/// when the first byte arrives (a command that prints nothing never
/// builds one).
enum Supply {
    Ready(Arc<Masker>),
    Values(Vec<(String, Vec<u8>)>),
}

impl Supply {
    fn get(&mut self) -> Arc<Masker> {
        match self {
            Supply::Ready(m) => m.clone(),
            Supply::Values(v) => {
                let m = Arc::new(Masker::new(std::mem::take(v)));
                *self = Supply::Ready(m.clone());
                m
            }
        }
    }
}

/// Where one source's masked bytes go: a sink whose writer is made with
/// the first bytes, the writer, or a caller's writer ([`pump`]).
enum Out<'a, W: Write> {
    Sink(Option<W>),
    Own(MaskWriter<W>),
    Borrowed(&'a mut MaskWriter<W>),
}

impl<W: Write> Out<'_, W> {
    fn writer(&mut self, supply: &mut Supply) -> &mut MaskWriter<W> {
        if let Out::Sink(sink) = self {
            let sink = sink.take().expect("a sink until its writer is made");
            *self = Out::Own(MaskWriter::new(supply.get(), sink));
        }
        match self {
            Out::Own(w) => w,
            Out::Borrowed(w) => w,
            Out::Sink(_) => unreachable!("made above"),
        }
    }

    fn made(&self) -> Option<&MaskWriter<W>> {
        match self {
            Out::Own(w) => Some(w),
            Out::Borrowed(w) => Some(w),
            Out::Sink(_) => None,
        }
    }

    fn pending(&self) -> bool {
        self.made().is_some_and(|w| w.has_pending())
    }
}

/// One source of a [`Pump`]: its descriptor (dropped, so closed, at its
/// end or on a write error) and where its bytes go.
struct Source<'a, W: Write> {
    fd: Option<OwnedFd>,
    out: Out<'a, W>,
    /// When bytes last came.
    last: Instant,
}

impl<W: Write> Source<'_, W> {
    /// Release the held tail (after [`IDLE`], at the drain, at the end).
    /// A write error closes the source: the producer then sees a closed
    /// pipe, as it would have without the masker.
    fn release(&mut self, error: &mut Option<io::Error>) {
        let r = match &mut self.out {
            Out::Own(w) => w.release_pending(),
            Out::Borrowed(w) => w.release_pending(),
            Out::Sink(_) => Ok(()),
        };
        if let Err(e) = r {
            error.get_or_insert(e);
            self.fd = None;
        }
    }

    /// Read what is there into the writer; at the end (or on an error)
    /// release the held tail and close.
    fn read(&mut self, buf: &mut [u8], supply: &mut Supply, error: &mut Option<io::Error>) {
        let Some(fd) = self.fd.as_ref() else { return };
        match rustix::io::read(fd, &mut *buf) {
            Ok(0) => {
                self.release(error);
                self.fd = None;
            }
            Ok(k) => {
                let w = self.out.writer(supply);
                if let Err(e) = w.write_all(&buf[..k]).and_then(|()| w.flush()) {
                    error.get_or_insert(e);
                    self.fd = None;
                }
                self.last = Instant::now();
            }
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
            Err(e) => {
                error.get_or_insert(e.into());
                self.release(error);
                self.fd = None;
            }
        }
    }
}

/// Several sources (a descriptor → a [`MaskWriter`] → its sink) read in
/// one `poll` loop by one thread — the streaming policy of `exec
/// --redact`, `redact`, the per-command helper and the daemon:
///
/// - each source in order, flushed after every read; the held tail of an
///   unfinished line released after [`IDLE`] without new bytes on that
///   source (so a prompt appears);
/// - once the producer is done ([`Pump::done_when`] readable or hung up,
///   or [`Pump::done`]), [`Pump::until_drained`] reads on while bytes keep
///   coming and returns when every source has ended or every open one has
///   been quiet for [`DRAIN_IDLE`] (a descendant that outlives the
///   command and keeps a stream open does not hold the caller); without
///   a producer signal it returns when every source has ended;
/// - [`Pump::to_end`] reads every source to its end, drain or not (the
///   relay's background jobs);
/// - the held tails are released when a run returns.
///
/// One thread writes every sink, each write whole: while the reader of
/// one sink is slow, the other sources wait too (their producers fill
/// their pipes, as they would fill the sink's without the masker). An
/// error writing a sink closes its source only (its producer sees a
/// closed pipe); the first such error is [`Pump::error`]'s.
pub struct Pump<'a, W: Write> {
    sources: Vec<Source<'a, W>>,
    supply: Supply,
    /// The producer's signal, while it has not come.
    done: Option<std::os::fd::BorrowedFd<'a>>,
    /// Since when the producer is done.
    stopped: Option<Instant>,
    /// A source's pipe was grown: read [`PIPE_SIZE`] at a time.
    grow: bool,
    error: Option<io::Error>,
}

impl<'a, W: Write> Pump<'a, W> {
    /// A pump masking with `masker`.
    pub fn new(masker: Arc<Masker>) -> Self {
        Self::with(Supply::Ready(masker))
    }

    /// A pump masking `values`, its masker built when the first byte
    /// arrives.
    pub fn lazy(values: Vec<(String, Vec<u8>)>) -> Self {
        Self::with(Supply::Values(values))
    }

    fn with(supply: Supply) -> Self {
        Pump {
            sources: Vec::new(),
            supply,
            done: None,
            stopped: None,
            grow: false,
            error: None,
        }
    }

    /// Read `fd` through a writer made with the first bytes into `sink`.
    pub fn source(mut self, fd: OwnedFd, sink: W) -> Self {
        self.add(fd, Out::Sink(Some(sink)), false);
        self
    }

    /// [`Pump::source`], its pipe asked to grow to [`PIPE_SIZE`] (1 MiB,
    /// the unprivileged maximum by default; Linux only, see
    /// [`crate::platform::set_pipe_size`]), and the pump then reads up to
    /// that much at a time: a fast producer fills its pipe while the
    /// masker works, with fewer reads, writes and wake-ups. For a
    /// command's own streams (`exec --redact`), not the relay's FIFOs,
    /// many at once: each 1 MiB pipe counts against the user's
    /// pipe-user-pages-soft, past which every new pipe of the user's is
    /// small.
    pub fn grown_source(mut self, fd: OwnedFd, sink: W) -> Self {
        self.add(fd, Out::Sink(Some(sink)), true);
        self
    }

    /// Read `fd` (grown as [`Pump::grown_source`]) through the caller's
    /// writer `w`.
    pub fn source_to(mut self, fd: OwnedFd, w: &'a mut MaskWriter<W>) -> Self {
        self.add(fd, Out::Borrowed(w), true);
        self
    }

    fn add(&mut self, fd: OwnedFd, out: Out<'a, W>, grow: bool) {
        if grow {
            crate::platform::set_pipe_size(fd.as_fd(), PIPE_SIZE);
            self.grow = true;
        }
        self.sources.push(Source {
            fd: Some(fd),
            out,
            last: Instant::now(),
        });
    }

    /// The producer is done when `fd` is readable or hangs up (a pidfd, a
    /// pipe whose writer goes away, the shell's control FIFO).
    pub fn done_when(mut self, fd: std::os::fd::BorrowedFd<'a>) -> Self {
        self.done = Some(fd);
        self
    }

    /// The producer is done now.
    pub fn done(mut self) -> Self {
        self.done = None;
        self.stopped = Some(Instant::now());
        self
    }

    /// Run until drained (see [`Pump`]); an error only when `poll` fails.
    pub fn until_drained(&mut self) -> io::Result<()> {
        self.run(true)
    }

    /// Run until every source has ended.
    pub fn to_end(&mut self) -> io::Result<()> {
        self.run(false)
    }

    /// The first error of a source (reading it, or writing its sink).
    pub fn error(&mut self) -> Option<io::Error> {
        self.error.take()
    }

    /// When the open sources have all been quiet since (at the earliest
    /// the producer's end).
    fn quiet_since(&self, stopped: Instant) -> Instant {
        self.sources
            .iter()
            .filter(|s| s.fd.is_some())
            .map(|s| s.last)
            .fold(stopped, Instant::max)
    }

    fn run(&mut self, drain: bool) -> io::Result<()> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let mut buf = vec![0u8; if self.grow { PIPE_SIZE } else { READ_SIZE }];
        loop {
            let now = Instant::now();
            let open = self.sources.iter().filter(|s| s.fd.is_some()).count();
            let over = if drain {
                (open == 0 && self.done.is_none())
                    || self
                        .stopped
                        .is_some_and(|t| open == 0 || now >= self.quiet_since(t) + DRAIN_IDLE)
            } else {
                open == 0
            };
            if over {
                break;
            }
            // The next deadline: a held tail's release, the drain.
            let mut deadline: Option<Instant> = None;
            let mut at = |t: Instant| deadline = Some(deadline.map_or(t, |d| d.min(t)));
            for s in self
                .sources
                .iter()
                .filter(|s| s.fd.is_some() && s.out.pending())
            {
                at(s.last + IDLE);
            }
            if let (true, Some(t)) = (drain, self.stopped) {
                at(self.quiet_since(t) + DRAIN_IDLE);
            }
            let ts = deadline
                .map(|d| Timespec::try_from(d.saturating_duration_since(now)).unwrap_or_default());
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(self.sources.len() + 1);
            let mut which: Vec<usize> = Vec::with_capacity(self.sources.len() + 1);
            for (i, s) in self.sources.iter().enumerate() {
                if let Some(fd) = s.fd.as_ref() {
                    fds.push(PollFd::new(fd, PollFlags::IN));
                    which.push(i);
                }
            }
            if let Some(d) = self.done {
                fds.push(PollFd::from_borrowed_fd(d, PollFlags::IN));
                which.push(usize::MAX);
            }
            match poll(&mut fds, ts.as_ref()) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            let ready: Vec<usize> = fds
                .iter()
                .zip(&which)
                .filter(|(f, _)| !f.revents().is_empty())
                .map(|(_, &i)| i)
                .collect();
            drop(fds);
            for i in ready {
                if i == usize::MAX {
                    self.done = None;
                    self.stopped.get_or_insert_with(Instant::now);
                } else {
                    self.sources[i].read(&mut buf, &mut self.supply, &mut self.error);
                }
            }
            let now = Instant::now();
            for s in self.sources.iter_mut() {
                if s.fd.is_some() && s.out.pending() && now >= s.last + IDLE {
                    s.release(&mut self.error);
                }
            }
        }
        for s in self.sources.iter_mut() {
            s.release(&mut self.error);
        }
        Ok(())
    }
}

/// Read `src` to its end through `w` (a [`Pump`] of one source, its pipe
/// grown), its held tail released after [`IDLE`] without new bytes;
/// `stop`, when given, is the producer's signal ([`Pump::done_when`]).
/// The error reading `src` or writing `w`, if any.
pub fn pump<W: Write>(
    src: impl AsFd,
    w: &mut MaskWriter<W>,
    stop: Option<std::os::fd::BorrowedFd<'_>>,
) -> io::Result<()> {
    let fd = src.as_fd().try_clone_to_owned()?;
    let mut p = Pump::new(w.masker.clone()).source_to(fd, w);
    if let Some(stop) = stop {
        p = p.done_when(stop);
    }
    p.until_drained()?;
    match p.error() {
        Some(e) => Err(e),
        None => Ok(()),
    }
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

    /// `input` written in three pieces, split at every pair of offsets,
    /// masks to `whole`.
    fn every_split_equals(m: &Arc<Masker>, input: &[u8], whole: &[u8]) {
        for a in 0..input.len() {
            for b in a..input.len() {
                let mut w = MaskWriter::new(m.clone(), Vec::new());
                w.write_all(&input[..a]).unwrap();
                w.write_all(&input[a..b]).unwrap();
                w.write_all(&input[b..]).unwrap();
                assert_eq!(w.finish().unwrap(), whole, "split at {a}/{b}");
            }
        }
    }

    #[test]
    fn split_at_every_offset_equals_whole() {
        let m = masker(&[("TOKEN", b"s3cr3t-t0ken"), ("LONG", b"s3cr3t-t0ken-longer")]);
        let input = b"pre s3cr3t-t0ken mid czNjcjN0LXQwa2Vu s3cr3t-t0ken-longer\nand s3cr3t-t0k";
        let whole = m.mask(input);
        every_split_equals(&m, input, &whole);
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
        every_split_equals(&m, input, &whole);
        // The end of a line whose start was released is no JSON text of
        // its own (`a` then `3000`; LONGER keeps `3000` held to the end).
        let m2 = masker(&[("PORT", b"3000"), ("LONGER", b"3000-and-more")]);
        every_split_equals(&m2, b"a3000", b"a[REDACTED:PORT]");
        assert_eq!(chunked(&m2, b"a3000", &[1]), b"a[REDACTED:PORT]");
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

    /// A test sink: what it got, shared; or a failing one.
    #[derive(Clone, Default)]
    struct Sink {
        got: Arc<std::sync::Mutex<Vec<u8>>>,
        fail: bool,
    }

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.fail {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            self.got.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn got(&self) -> Vec<u8> {
            self.got.lock().unwrap().clone()
        }
    }

    /// Each of two sources, written a few bytes at a time with the value
    /// split across writes, comes out whole, masked and in order.
    #[test]
    fn two_sources_in_one_loop_each_in_order_and_masked() {
        let (r1, mut w1) = std::io::pipe().unwrap();
        let (r2, mut w2) = std::io::pipe().unwrap();
        let line = |i: usize| format!("{i} s3cr3t-t0ken {i}\n");
        let t = std::thread::spawn(move || {
            for i in 0..200 {
                for piece in line(i).as_bytes().chunks(5) {
                    w1.write_all(piece).unwrap();
                    w2.write_all(piece).unwrap();
                }
            }
        });
        let (a, b) = (Sink::default(), Sink::default());
        let mut p = Pump::lazy(vec![("TOKEN".into(), b"s3cr3t-t0ken".to_vec())])
            .source(r1.into(), a.clone())
            .source(r2.into(), b.clone());
        p.until_drained().unwrap();
        t.join().unwrap();
        assert!(p.error().is_none());
        let want: String = (0..200)
            .map(|i| format!("{i} [REDACTED:TOKEN] {i}\n"))
            .collect();
        assert_eq!(String::from_utf8(a.got()).unwrap(), want);
        assert_eq!(String::from_utf8(b.got()).unwrap(), want);
    }

    /// A prompt's held tail comes out after [`IDLE`] while its source
    /// stays open (no timing upper bound: the producer waits to see it).
    #[test]
    fn a_held_tail_is_released_after_idle_while_the_source_is_open() {
        let (r, mut wr) = std::io::pipe().unwrap();
        let sink = Sink::default();
        let seen = sink.clone();
        let t = std::thread::spawn(move || {
            let start = Instant::now();
            wr.write_all(b"Password: s3cr").unwrap();
            while seen.got() != b"Password: s3cr" {
                assert!(start.elapsed() < Duration::from_secs(20), "never released");
                std::thread::sleep(Duration::from_millis(2));
            }
            let waited = start.elapsed();
            wr.write_all(b"\n").unwrap();
            waited
        });
        let mut p = Pump::new(masker(&[("TOKEN", b"s3cr3t-t0ken")])).source(r.into(), sink.clone());
        p.until_drained().unwrap();
        let waited = t.join().unwrap();
        assert!(waited >= IDLE, "released after {waited:?}");
        assert_eq!(sink.got(), b"Password: s3cr\n");
    }

    /// Once the producer is done, a source a descendant holds open is
    /// left after [`DRAIN_IDLE`] of quiet; `to_end` then reads on, masked,
    /// to its end.
    #[test]
    fn the_drain_leaves_a_held_source_and_to_end_reads_on() {
        let (r, mut wr) = std::io::pipe().unwrap();
        let (done_r, done_w) = std::io::pipe().unwrap();
        let sink = Sink::default();
        wr.write_all(b"a s3cr3t-t0ken\nheld s3cr3t").unwrap();
        drop(done_w);
        let mut p = Pump::new(masker(&[("TOKEN", b"s3cr3t-t0ken")]))
            .source(r.into(), sink.clone())
            .done_when(done_r.as_fd());
        let start = Instant::now();
        p.until_drained().unwrap();
        assert!(start.elapsed() >= DRAIN_IDLE);
        // `wr` is still open: the drain, not the end, ended the run, and
        // the held tail went out with it.
        assert_eq!(sink.got(), b"a [REDACTED:TOKEN]\nheld s3cr3t");
        wr.write_all(b"\nlate s3cr3t-t0ken\n").unwrap();
        drop(wr);
        p.to_end().unwrap();
        assert_eq!(
            sink.got(),
            b"a [REDACTED:TOKEN]\nheld s3cr3t\nlate [REDACTED:TOKEN]\n"
        );
    }

    /// Every source ended before the producer's signal: the run waits for
    /// it (the relay's `x` after a command that closed both streams).
    #[test]
    fn ended_sources_wait_for_the_producer() {
        let (r, wr) = std::io::pipe().unwrap();
        let (done_r, done_w) = std::io::pipe().unwrap();
        drop(wr);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            drop(done_w);
            Instant::now()
        });
        let mut p = Pump::new(masker(&[("TOKEN", b"s3cr3t-t0ken")]))
            .source(r.into(), Sink::default())
            .done_when(done_r.as_fd());
        p.until_drained().unwrap();
        let ended = Instant::now();
        assert!(ended >= t.join().unwrap());
    }

    /// A sink that fails closes its own source only: its producer sees a
    /// closed pipe, the other source goes on, the error is kept.
    #[test]
    fn a_failing_sink_closes_its_source_only() {
        let (r1, mut w1) = std::io::pipe().unwrap();
        let (r2, mut w2) = std::io::pipe().unwrap();
        let bad = Sink {
            fail: true,
            ..Sink::default()
        };
        let good = Sink::default();
        w1.write_all(b"x\n").unwrap();
        let t = std::thread::spawn(move || {
            // Until the pump has closed the read end.
            let start = Instant::now();
            while w1.write_all(b"y\n").is_ok() {
                assert!(start.elapsed() < Duration::from_secs(20));
                std::thread::sleep(Duration::from_millis(1));
            }
            w2.write_all(b"after s3cr3t-t0ken\n").unwrap();
        });
        let mut p = Pump::new(masker(&[("TOKEN", b"s3cr3t-t0ken")]))
            .source(r1.into(), bad)
            .source(r2.into(), good.clone());
        p.until_drained().unwrap();
        t.join().unwrap();
        assert_eq!(good.got(), b"after [REDACTED:TOKEN]\n");
        assert_eq!(p.error().map(|e| e.kind()), Some(io::ErrorKind::BrokenPipe));
    }
}
