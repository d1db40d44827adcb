//! The engine of `agentenv audit` (docs/audit-set.md#audit-and-set): search files for
//! every form of the sensitive values ([`crate::mask::Masker`]'s needles) and,
//! with `--fix`, replace each occurrence with `[REDACTED:NAME]` in place.
//!
//! Reads stream: [`CHUNK`] bytes at a time plus a carried tail of at most
//! the longest needle, so memory is bounded whatever a file's size or its
//! longest line. The matches are the masker's (leftmost-longest,
//! non-overlapping) over the whole file, chunk boundaries included: a match
//! starting in the last `longest needle − 1` bytes of a chunk is decided
//! only with the next chunk. No needle holds a line end, so a line number
//! is the count of LFs before the match, plus one.
//!
//! A fix writes a temp file in the same directory (same mode, same owner
//! and group), streams the file into it with the replacements, and renames
//! it over the original only when the original is still the file that was
//! scanned (device, inode, size, modification time). It refuses a symlink,
//! a file another user owns, anything but a regular file, and a file that
//! changed since (or during) the scan. In a line that starts with `{` or
//! `[` (a JSON line) an occurrence is replaced only when it lies wholly
//! inside one JSON string, between escapes; `[REDACTED:NAME]` holds no
//! character JSON escapes, so the line stays valid JSON. An occurrence
//! elsewhere in a JSON line (a bare number, across an escape or a quote) is
//! left as it is and counted as not fixed.
//!
//! Nothing here prints; no value or fragment of one leaves this module
//! (results are needle indices, line numbers and counts). Around it:
//! which values to look for ([`sensitive_values`], the session's own
//! rule), where to look and the threads ([`walk`]), what git holds
//! ([`git`]) and the report ([`report`]).

pub mod git;
pub mod report;
pub mod walk;

use crate::mask::Masker;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The sessions whose values audit looks for: `req` as `env` assembles
/// it (the trust gate as `--require-trust` says), or with `all_stores`
/// the ungated session and, unless `-g`, the user/system stores alone;
/// with `all_projects` also every project store `agentenv allow`
/// recorded, each as the shell hook loads it.
pub fn requests(
    req: crate::session::Request,
    all_stores: bool,
    all_projects: bool,
    env: &crate::core::Env,
) -> Vec<crate::session::Request> {
    use crate::session::{trust, Request, RootRule};
    let mut runs = Vec::new();
    if all_stores {
        let ungated = Request {
            root: RootRule::Ungated,
            ..req
        };
        if !ungated.options.global {
            let mut g = ungated.clone();
            g.options.global = true;
            runs.push(ungated);
            runs.push(g);
        } else {
            runs.push(ungated);
        }
    } else {
        runs.push(req);
    }
    let global = runs.first().is_none_or(|r| r.options.global);
    if all_projects && !global {
        let state = trust::state_dir(env).ok();
        let base = runs[0].clone();
        for store in state.map(|s| trust::allowed_stores(&s)).unwrap_or_default() {
            let Some(root) = store.parent().filter(|_| store.is_dir()) else {
                continue;
            };
            let mut r = base.clone();
            r.root = RootRule::WalkUp;
            r.options.cwd = Some(root.to_path_buf());
            r.options.project_root = None;
            runs.push(r);
        }
    }
    runs
}

/// The values to look for: the union, in order, of each run's
/// [`crate::session::Session::values_to_mask`] (the one rule of which
/// values a session masks), each pair once. `assemble` runs one request
/// (the caller plans it and shows its notes).
pub fn sensitive_values<E>(
    runs: &[crate::session::Request],
    mut assemble: impl FnMut(&crate::session::Request) -> Result<crate::session::Session, E>,
) -> Result<Vec<(String, Vec<u8>)>, E> {
    let mut all: Vec<(String, Vec<u8>)> = Vec::new();
    for r in runs {
        for pair in assemble(r)?.values_to_mask() {
            if !all.contains(&pair) {
                all.push(pair);
            }
        }
    }
    Ok(all)
}

/// Bytes read at a time.
pub const CHUNK: usize = 1 << 20;

/// One occurrence: the needle ([`Masker::needles`] index) and its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line of the match's first byte.
    pub line: u64,
    /// Index into [`Masker::needles`].
    pub needle: usize,
}

/// What identifies one version of a file: a fix goes ahead only when the
/// file still has the stamp the scan saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
    /// The owner (not part of the comparison).
    pub uid: u32,
}

impl Stamp {
    fn of(md: &fs::Metadata) -> Stamp {
        Stamp {
            dev: md.dev(),
            ino: md.ino(),
            len: md.len(),
            mtime: md.mtime(),
            mtime_nsec: md.mtime_nsec(),
            uid: md.uid(),
        }
    }

    fn same_file(&self, o: &Stamp) -> bool {
        (self.dev, self.ino, self.len, self.mtime, self.mtime_nsec)
            == (o.dev, o.ino, o.len, o.mtime, o.mtime_nsec)
    }
}

/// The result of scanning one file.
#[derive(Debug, Clone)]
pub struct Scan {
    /// Every occurrence, in file order.
    pub findings: Vec<Finding>,
    /// Bytes read.
    pub bytes: u64,
    /// The file as it was opened.
    pub stamp: Stamp,
    /// The file changed while it was read (a growing transcript).
    pub changed: bool,
}

/// Why a file was not scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    /// Not a regular file (a FIFO, a device, a socket), or a symlink where
    /// none is followed.
    NotRegular,
    /// The OS error, as [`crate::fsutil::io_kind`] words it.
    Io(String),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::NotRegular => f.write_str("not a regular file"),
            ScanError::Io(why) => f.write_str(why),
        }
    }
}

fn io_err(e: &io::Error) -> ScanError {
    ScanError::Io(crate::fsutil::io_kind(e))
}

/// Open `path` for reading without blocking on a FIFO; with
/// `follow == false` a symlink is refused (`O_NOFOLLOW`). The file must
/// be regular.
fn open_regular(path: &Path, follow: bool) -> Result<(File, fs::Metadata), ScanError> {
    let mut flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
    if !follow {
        flags |= rustix::fs::OFlags::NOFOLLOW;
    }
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) && !follow {
                ScanError::NotRegular
            } else {
                io_err(&e)
            }
        })?;
    let md = f.metadata().map_err(|e| io_err(&e))?;
    if !md.is_file() {
        return Err(ScanError::NotRegular);
    }
    // Back to blocking reads (a regular file never blocks anyway).
    let _ = rustix::fs::fcntl_setfl(&f, rustix::fs::OFlags::empty());
    Ok((f, md))
}

/// Where the matches of a stream go: the bytes between matches, and each
/// match (needle index and its bytes).
trait Sink {
    fn plain(&mut self, bytes: &[u8]) -> io::Result<()>;
    fn found(&mut self, needle: usize, bytes: &[u8]) -> io::Result<()>;
}

/// Read from `r` into `buf[len..]` until it is full or the reader ends;
/// the new length and whether the reader ended.
fn fill(r: &mut impl Read, buf: &mut [u8], mut len: usize) -> io::Result<(usize, bool)> {
    while len < buf.len() {
        match r.read(&mut buf[len..]) {
            Ok(0) => return Ok((len, true)),
            Ok(n) => len += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((len, false))
}

/// The masker's matches in a chunk: [`Masker::find_before`] (its sampled
/// q-gram filter and short-needle automaton, see `mask::search`), plus the
/// longest needle's length for the carried tail. Built once, shared by
/// the threads.
pub struct Finder<'a> {
    m: &'a Masker,
    max_len: usize,
}

impl<'a> Finder<'a> {
    /// The finder of `m`'s needles.
    pub fn new(m: &'a Masker) -> Finder<'a> {
        let max_len = m
            .needles()
            .iter()
            .map(|n| n.bytes.len())
            .max()
            .unwrap_or(1)
            .max(1);
        Finder { m, max_len }
    }

    /// The masker whose needles it finds.
    pub fn masker(&self) -> &'a Masker {
        self.m
    }

    /// The longest needle.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The masker's matches in `data` that start before `limit`, in order.
    pub fn find(&self, data: &[u8], limit: usize, out: &mut Vec<crate::mask::Found>) {
        self.m.find_before(data, limit, out);
    }
}

/// Run the masker over `r` in chunks, telling `sink` about every byte in
/// order (see the module docs). Returns the bytes read.
fn stream(r: &mut impl Read, finder: &Finder, sink: &mut impl Sink) -> io::Result<u64> {
    let max_len = finder.max_len();
    let mut buf = vec![0u8; CHUNK + max_len];
    let mut found = Vec::new();
    let mut carry = 0usize;
    let mut total = 0u64;
    loop {
        let (len, eof) = fill(r, &mut buf, carry)?;
        total += (len - carry) as u64;
        let data = &buf[..len];
        // Every needle starting before `safe` is wholly inside `data`.
        let safe = if eof {
            len
        } else {
            len.saturating_sub(max_len - 1)
        };
        finder.find(data, safe, &mut found);
        let mut pos = 0;
        for f in &found {
            sink.plain(&data[pos..f.start])?;
            sink.found(f.needle, &data[f.start..f.end])?;
            pos = f.end;
        }
        let keep = pos.max(safe);
        sink.plain(&data[pos..keep])?;
        if eof {
            return Ok(total);
        }
        buf.copy_within(keep..len, 0);
        carry = len - keep;
    }
}

/// The LFs in `b` (a loop the compiler vectorises: byte counters per lane,
/// summed every 255 blocks).
fn count_lf(b: &[u8]) -> u64 {
    const W: usize = 32;
    let mut total = 0u64;
    let mut blocks = b.chunks_exact(W);
    loop {
        let mut acc = [0u8; W];
        let mut n = 0;
        for blk in blocks.by_ref() {
            for i in 0..W {
                acc[i] += u8::from(blk[i] == b'\n');
            }
            n += 1;
            if n == 255 {
                break;
            }
        }
        total += acc.iter().map(|&x| u64::from(x)).sum::<u64>();
        if n < 255 {
            break;
        }
    }
    total + blocks.remainder().iter().filter(|&&c| c == b'\n').count() as u64
}

/// Collects findings with their line numbers.
struct Collect {
    line: u64,
    findings: Vec<Finding>,
}

impl Sink for Collect {
    fn plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.line += count_lf(bytes);
        Ok(())
    }
    fn found(&mut self, needle: usize, _bytes: &[u8]) -> io::Result<()> {
        self.findings.push(Finding {
            line: self.line + 1,
            needle,
        });
        Ok(())
    }
}

/// Scan one file. `follow`: whether `path` itself may be a symlink (a
/// path the user named); entries met in a directory walk are opened with
/// `follow == false`.
pub fn scan_file(path: &Path, follow: bool, finder: &Finder) -> Result<Scan, ScanError> {
    let m = finder.m;
    let (mut f, md) = open_regular(path, follow)?;
    let stamp = Stamp::of(&md);
    let mut sink = Collect {
        line: 0,
        findings: Vec::new(),
    };
    let bytes = if m.is_empty() {
        0
    } else {
        stream(&mut f, finder, &mut sink).map_err(|e| io_err(&e))?
    };
    let after = f.metadata().map_err(|e| io_err(&e))?;
    let changed = !stamp.same_file(&Stamp::of(&after)) || (!m.is_empty() && bytes != stamp.len);
    Ok(Scan {
        findings: sink.findings,
        bytes,
        stamp,
        changed,
    })
}

/// Scan what `r` yields (a blob of the git index, `audit --staged`): the
/// findings in order, and the bytes read.
pub fn scan_reader(r: &mut impl Read, finder: &Finder) -> io::Result<(Vec<Finding>, u64)> {
    let mut sink = Collect {
        line: 0,
        findings: Vec::new(),
    };
    if finder.m.is_empty() {
        let n = io::copy(r, &mut io::sink())?;
        return Ok((Vec::new(), n));
    }
    let n = stream(r, finder, &mut sink)?;
    Ok((sink.findings, n))
}

/// What a fix did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    /// Occurrences replaced.
    pub replaced: u64,
    /// Occurrences left in place (outside a JSON string in a JSON line).
    pub left: u64,
    /// Other hard links of the file fixed (its `st_nlink` less one): they
    /// keep the old content, since the fixed copy is renamed over this
    /// path only.
    pub other_links: u64,
    /// The old file's inode number, to find those links (`find -inum`).
    pub inode: u64,
}

/// Why a file was not fixed (it is left untouched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixRefused {
    /// The path is a symlink.
    Symlink,
    /// Another user owns the file.
    Foreign(u32),
    /// Not a regular file.
    NotRegular,
    /// It changed since (or while) it was scanned.
    Changed,
    /// An OS error on the way (the file is untouched).
    Io(String),
}

impl std::fmt::Display for FixRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FixRefused::Symlink => f.write_str("it is a symlink (fix the file it points to by its own path)"),
            FixRefused::Foreign(uid) => write!(f, "it is owned by another user (uid {uid})"),
            FixRefused::NotRegular => f.write_str("it is not a regular file"),
            FixRefused::Changed => f.write_str(
                "it changed during the scan (a session still writing it?); run audit --fix again when it is idle",
            ),
            FixRefused::Io(why) => f.write_str(why),
        }
    }
}

/// Tracks whether a byte position is inside a JSON string, between
/// escapes, in a line that starts with `{` or `[`.
#[derive(Debug, Clone, Copy, Default)]
struct JsonTrack {
    /// A non-blank byte was seen on this line.
    started: bool,
    /// The line's first non-blank byte is `{` or `[`.
    json: bool,
    in_str: bool,
    after_backslash: bool,
    hex_left: u8,
}

impl JsonTrack {
    fn step(&mut self, b: u8) {
        if b == b'\n' {
            *self = JsonTrack::default();
            return;
        }
        if !self.started {
            if matches!(b, b' ' | b'\t' | b'\r') {
                return;
            }
            self.started = true;
            self.json = b == b'{' || b == b'[';
        }
        if !self.json {
            return;
        }
        if self.in_str {
            if self.after_backslash {
                self.after_backslash = false;
                if b == b'u' {
                    self.hex_left = 4;
                }
            } else if self.hex_left > 0 {
                self.hex_left -= 1;
            } else if b == b'\\' {
                self.after_backslash = true;
            } else if b == b'"' {
                self.in_str = false;
            }
        } else if b == b'"' {
            self.in_str = true;
        }
    }

    fn between_escapes_in_string(&self) -> bool {
        self.in_str && !self.after_backslash && self.hex_left == 0
    }

    /// May `bytes`, starting at this state, be replaced by text without
    /// JSON-special characters, keeping the line valid?
    fn may_replace(&self, bytes: &[u8]) -> bool {
        let mut t = *self;
        t.step(bytes[0]);
        if !t.json {
            return true;
        }
        if !self.between_escapes_in_string() {
            return false;
        }
        let mut t = *self;
        for &b in bytes {
            t.step(b);
            if !t.in_str {
                return false;
            }
        }
        t.between_escapes_in_string()
    }
}

/// Writes the fixed copy.
struct Rewrite<'a, W: Write> {
    out: W,
    m: &'a Masker,
    track: JsonTrack,
    fixed: Fixed,
}

impl<W: Write> Sink for Rewrite<'_, W> {
    fn plain(&mut self, bytes: &[u8]) -> io::Result<()> {
        for &b in bytes {
            self.track.step(b);
        }
        self.out.write_all(bytes)
    }
    fn found(&mut self, needle: usize, bytes: &[u8]) -> io::Result<()> {
        if self.track.may_replace(bytes) {
            self.fixed.replaced += 1;
            // The state after the match is the state before it (inside
            // a string, between escapes) or a plain line.
            let start_of_line = !self.track.started;
            if start_of_line {
                self.track.step(bytes[0]);
            }
            self.out.write_all(self.m.replacement(needle))
        } else {
            self.fixed.left += 1;
            for &b in bytes {
                self.track.step(b);
            }
            self.out.write_all(bytes)
        }
    }
}

/// Replace every occurrence in `path` (see the module docs), provided the
/// file is still what `scanned` describes.
pub fn fix_file(path: &Path, finder: &Finder, scanned: &Stamp) -> Result<Fixed, FixRefused> {
    let m = finder.m;
    let io = |e: io::Error| FixRefused::Io(crate::fsutil::io_kind(&e));
    let lmd = fs::symlink_metadata(path).map_err(io)?;
    if lmd.file_type().is_symlink() {
        return Err(FixRefused::Symlink);
    }
    if !lmd.is_file() {
        return Err(FixRefused::NotRegular);
    }
    let me = rustix::process::geteuid().as_raw();
    if lmd.uid() != me {
        return Err(FixRefused::Foreign(lmd.uid()));
    }
    if !Stamp::of(&lmd).same_file(scanned) {
        return Err(FixRefused::Changed);
    }
    let (mut src, md) = match open_regular(path, false) {
        Ok(x) => x,
        Err(ScanError::NotRegular) => return Err(FixRefused::Symlink),
        Err(ScanError::Io(why)) => return Err(FixRefused::Io(why)),
    };
    if !Stamp::of(&md).same_file(scanned) {
        return Err(FixRefused::Changed);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".agentenv-audit-")
        .suffix(".tmp")
        .permissions(fs::Permissions::from_mode(0o600))
        .tempfile_in(&dir)
        .map_err(io)?;
    // Same group (the owner is us, checked above), then the same mode.
    rustix::fs::fchown(
        tmp.as_file(),
        None,
        Some(rustix::fs::Gid::from_raw(md.gid())),
    )
    .map_err(|e| io(e.into()))?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(md.mode() & 0o7777))
        .map_err(io)?;
    let mut sink = Rewrite {
        out: io::BufWriter::with_capacity(CHUNK, tmp.as_file()),
        m,
        track: JsonTrack::default(),
        fixed: Fixed {
            replaced: 0,
            left: 0,
            other_links: md.nlink().saturating_sub(1),
            inode: md.ino(),
        },
    };
    let n = stream(&mut src, finder, &mut sink).map_err(io)?;
    let fixed = sink.fixed;
    sink.out.flush().map_err(io)?;
    drop(sink);
    tmp.as_file().sync_all().map_err(io)?;
    // Still the scanned file, unchanged while it was copied?
    let now = fs::symlink_metadata(path).map_err(io)?;
    if n != scanned.len
        || !Stamp::of(&now).same_file(scanned)
        || !Stamp::of(&src.metadata().map_err(io)?).same_file(scanned)
    {
        return Err(FixRefused::Changed);
    }
    if fixed.replaced == 0 {
        return Ok(fixed); // nothing to change: the temp file goes away
    }
    tmp.persist(path).map_err(|e| io(e.error))?;
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masker(pairs: &[(&str, &str)]) -> Masker {
        Masker::new(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())),
        )
    }

    /// A reader that returns at most `n` bytes per read.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let k = self.0.len().min(self.1).min(buf.len());
            buf[..k].copy_from_slice(&self.0[..k]);
            self.0 = &self.0[k..];
            Ok(k)
        }
    }

    fn collect(data: &[u8], m: &Masker) -> Vec<(u64, usize)> {
        let mut sink = Collect {
            line: 0,
            findings: Vec::new(),
        };
        stream(&mut Trickle(data, usize::MAX), &Finder::new(m), &mut sink).unwrap();
        sink.findings.iter().map(|f| (f.line, f.needle)).collect()
    }

    /// The chunked stream finds exactly what one search over the whole
    /// input finds, whatever the chunk boundaries (the matches straddle
    /// every 1 MiB boundary of the input).
    #[test]
    fn chunked_matches_equal_whole_matches() {
        let m = masker(&[("TOKEN", "s3cr3t-token-value"), ("KEY", "abcdEFGH")]);
        let mut data = Vec::new();
        let mut i = 0u64;
        while data.len() < 3 * CHUNK + 1000 {
            data.extend_from_slice(format!("line {i} ").as_bytes());
            if i.is_multiple_of(7) {
                data.extend_from_slice(b"s3cr3t-token-value");
            }
            if i.is_multiple_of(11) {
                data.extend_from_slice(b"abcdEFGH");
            }
            data.push(b'\n');
            i += 1;
        }
        // Put a match across every chunk boundary.
        for k in 1..=3 {
            let at = k * CHUNK - 5;
            data.splice(at..at, b"s3cr3t-token-value".iter().copied());
        }
        let whole: Vec<(u64, usize)> = {
            let mut v = Vec::new();
            let (mut line, mut at) = (1, 0);
            for f in m.find_iter(&data) {
                line += count_lf(&data[at..f.start]);
                at = f.start;
                v.push((line, f.needle));
            }
            v
        };
        let got: Vec<(u64, usize)> = collect(&data, &m);
        assert_eq!(got, whole);
        // Short reads change nothing.
        let small = &data[..50_000];
        let want = collect(small, &m);
        assert!(!want.is_empty());
        for step in [1usize, 7, 4096] {
            let mut sink = Collect {
                line: 0,
                findings: Vec::new(),
            };
            stream(&mut Trickle(small, step), &Finder::new(&m), &mut sink).unwrap();
            let got: Vec<(u64, usize)> = sink.findings.iter().map(|f| (f.line, f.needle)).collect();
            assert_eq!(got, want, "reads of {step} bytes");
        }
    }

    /// The finder's matches are the masker's, on text dense with
    /// overlapping and adjacent occurrences, for short and long needles.
    #[test]
    fn finder_equals_the_masker() {
        let sets: &[&[(&str, &str)]] = &[
            &[("A", "abab"), ("B", "babc"), ("C", "abcabcab")],
            &[
                ("A", "abcabcabcabcabca"),
                ("B", "cabcabcab-x"),
                ("C", "bca\nbcabca"),
            ],
            &[("K", "ab-cd/ef+gh==ijkl"), ("L", "k+l")],
        ];
        let mut next = crate::mask::testing::xorshift(0x1234_5678_9abc_def0);
        for pairs in sets {
            let m = masker(pairs);
            let finder = Finder::new(&m);
            let alphabet = b"abc-x\n";
            for round in 0..200 {
                // Random text with whole needles planted at random places.
                let data = crate::mask::testing::planted_text(&m, &mut next, alphabet, 600, 6);
                let want: Vec<crate::mask::Found> = m.find_iter(&data).collect();
                let mut got = Vec::new();
                finder.find(&data, data.len(), &mut got);
                assert_eq!(got, want, "set {pairs:?} round {round}");
                // A limit keeps exactly the matches starting before it.
                let limit = data.len() / 2;
                finder.find(&data, limit, &mut got);
                let cut: Vec<_> = want.iter().copied().filter(|f| f.start < limit).collect();
                assert_eq!(got, cut, "limit, round {round}");
            }
        }
    }

    #[test]
    fn count_lf_counts() {
        for n in [0usize, 1, 31, 32, 33, 255 * 32, 255 * 32 + 7, 100_000] {
            let data: Vec<u8> = (0..n)
                .map(|i| if i % 3 == 0 { b'\n' } else { b'x' })
                .collect();
            assert_eq!(count_lf(&data), n.div_ceil(3) as u64, "{n}");
        }
    }

    /// A file that changed after its scan (a session appending to its
    /// transcript) is refused and left as it is; an unchanged one is
    /// fixed with its mode kept.
    #[test]
    fn fix_refuses_a_file_changed_since_the_scan() {
        let m = masker(&[("TOKEN", "s3cr3t-token-value")]);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        fs::write(&p, "{\"a\":\"s3cr3t-token-value\"}\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        let scan = scan_file(&p, false, &Finder::new(&m)).unwrap();
        assert_eq!(scan.findings, vec![Finding { line: 1, needle: 0 }]);
        assert!(!scan.changed);
        let mut f = fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"{\"b\":1}\n").unwrap();
        drop(f);
        let before = fs::read(&p).unwrap();
        assert_eq!(
            fix_file(&p, &Finder::new(&m), &scan.stamp),
            Err(FixRefused::Changed)
        );
        assert_eq!(fs::read(&p).unwrap(), before);
        let scan = scan_file(&p, false, &Finder::new(&m)).unwrap();
        let old_inode = fs::metadata(&p).unwrap().ino();
        let fixed = fix_file(&p, &Finder::new(&m), &scan.stamp).unwrap();
        assert_eq!(
            fixed,
            Fixed {
                replaced: 1,
                left: 0,
                other_links: 0,
                inode: old_inode,
            }
        );
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "{\"a\":\"[REDACTED:TOKEN]\"}\n{\"b\":1}\n"
        );
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            1,
            "a temp file was left"
        );
    }

    #[test]
    fn json_track_allows_only_clean_string_spans() {
        let may = |line: &str, at: usize, len: usize| {
            let mut t = JsonTrack::default();
            for &b in &line.as_bytes()[..at] {
                t.step(b);
            }
            t.may_replace(&line.as_bytes()[at..at + len])
        };
        let l = r#"{"a":"xx SECRET yy","n":8080,"e":"\nabc"}"#;
        assert!(may(l, l.find("SECRET").unwrap(), 6));
        assert!(!may(l, l.find("8080").unwrap(), 4)); // a bare number
        assert!(!may(l, l.find("nabc").unwrap(), 4)); // starts inside \n
        assert!(!may(l, l.find("yy\",").unwrap(), 4)); // crosses a quote
        assert!(may("plain 8080 text", 6, 4));
        assert!(may("  [\"SECRET\"]", 4, 6));
    }
}
