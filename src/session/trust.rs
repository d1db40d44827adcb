//! The trust gate (docs/shells.md#the-shell-hook-and-trust): a project store is
//! code, so the shell hook (and `env`/`exec`/`explain` under
//! `--require-trust`) loads it only after `agentenv allow` recorded a digest
//! of everything under it.
//!
//! State: `$XDG_STATE_HOME/agentenv/` (default `~/.local/state/agentenv/`),
//! directory `0700`, one record per allowed store at
//! `allowed/<blake3 of the store's real path>` (`0600`), written with temp
//! file + rename, so concurrent `allow`/`deny` runs never leave a torn
//! record (the last writer for one store wins; different stores never
//! touch the same file). A state directory that is not owned by the
//! effective user, or that group or others can write, is refused: its
//! records are not read (every store counts as not allowed) and nothing is
//! written into it.
//!
//! The digest is blake3 over every entry under the store in name order
//! (except the store's own top-level `.cache/`): per entry its relative
//! path and kind; a file's permission bits and content; a symlink's target
//! text, then what it points to (followed, with a depth bound, so a link to
//! a file elsewhere in the repository is covered); FIFOs, sockets and
//! devices by kind only (never opened).

use crate::core::Env;
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Whether a store may load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustState {
    /// Allowed, and unchanged since.
    Allowed,
    /// Never allowed (or denied since).
    NotAllowed,
    /// Allowed once, but its digest differs now.
    Changed,
}

impl TrustState {
    pub fn as_str(self) -> &'static str {
        match self {
            TrustState::Allowed => "allowed",
            TrustState::NotAllowed => "not allowed",
            TrustState::Changed => "changed since it was allowed",
        }
    }
}

/// Why trust state could not be read or written. The messages name paths
/// only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustError {
    /// No `$XDG_STATE_HOME` and no `$HOME`.
    NoStateDir,
    /// The state directory is someone else's, not a directory, or writable
    /// by group or others.
    UnsafeStateDir(PathBuf, &'static str),
    /// The store is not a directory.
    NoStore(PathBuf),
    /// The store holds more entries than [`MAX_ENTRIES`] (or links nest
    /// deeper than [`MAX_DEPTH`]).
    TooLarge(PathBuf),
    /// A file the digest will not read: it reads more bytes than its size
    /// says (a special file such as `/proc/self/pagemap`), or it would take
    /// the digest over [`MAX_BYTES`]. Names the file.
    OddFile(PathBuf, &'static str),
    /// The digest did not finish within the deadline (the session timeout).
    Timeout(PathBuf),
    /// The project's `.agents` is a symbolic link another user owns: it
    /// could borrow the trust of a store it points to, and be re-pointed.
    ForeignLink(PathBuf),
    Io(PathBuf, String),
}

impl std::fmt::Display for TrustError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrustError::NoStateDir => write!(
                f,
                "no state directory: set $XDG_STATE_HOME or $HOME to an absolute path"
            ),
            TrustError::UnsafeStateDir(p, why) => write!(
                f,
                "refusing the trust state directory {}: it {why}; fix its owner or mode (0700)",
                p.display()
            ),
            TrustError::NoStore(p) => write!(f, "{} is not a directory", p.display()),
            TrustError::TooLarge(p) => write!(
                f,
                "{} is too large to digest (more than {MAX_ENTRIES} entries or links nested deeper than {MAX_DEPTH})",
                p.display()
            ),
            TrustError::OddFile(p, why) => write!(f, "{} is not digested: {why}", p.display()),
            TrustError::Timeout(p) => write!(
                f,
                "digesting {} took longer than the timeout (--timeout, $AGENTS_ENV_TIMEOUT)",
                p.display()
            ),
            TrustError::ForeignLink(p) => write!(
                f,
                "{} is a symbolic link owned by another user (not followed)",
                p.display()
            ),
            TrustError::Io(p, why) => write!(f, "{}: {why}", p.display()),
        }
    }
}

/// Bound on the entries one digest visits.
pub const MAX_ENTRIES: usize = 100_000;
/// Bound on directory nesting (links followed included).
pub const MAX_DEPTH: usize = 32;
/// Bound on the bytes one digest reads (all files together).
pub const MAX_BYTES: u64 = 1 << 30;
/// Largest env file a snapshot keeps (as the session's plain-file limit).
pub const MAX_KEPT: u64 = 16 << 20;
/// Bound on the `bin/` and `lib/` paths a snapshot lists for the hook to
/// watch.
pub const MAX_WATCH: usize = 1024;

/// The limits of one digest: a deadline and a byte budget.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub deadline: std::time::Instant,
    pub max_bytes: u64,
}

impl Bounds {
    /// [`MAX_BYTES`] within `timeout` from now.
    pub fn within(timeout: std::time::Duration) -> Bounds {
        Bounds {
            deadline: std::time::Instant::now() + timeout,
            max_bytes: MAX_BYTES,
        }
    }

    /// The session timeout of `env` ($AGENTS_ENV_TIMEOUT, else 30 s).
    pub fn from_env(env: &Env) -> Bounds {
        Bounds::within(crate::process::timeout_from_env(env, &mut Vec::new()))
    }
}

/// The env files a store may hold (the walk's names), kept by a snapshot.
const ENV_NAMES: &[&[u8]] = &[
    b"pre.env.py",
    b"pre.env",
    b"pre.local.env",
    b"env.py",
    b"env",
    b"local.env",
];

/// What a digest saw besides its hash, for loading exactly what was
/// digested: the bytes of every env file of the store and its overlays
/// (by path relative to the store), the directories near the top, and the
/// `bin/` and `lib/` entries (for the hook to watch).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The store's real path.
    pub store: PathBuf,
    /// Env file → its bytes (`None`: over [`MAX_KEPT`], not kept).
    files: std::collections::HashMap<Vec<u8>, Option<std::sync::Arc<Vec<u8>>>>,
    /// Directories up to three components deep (`bin`, `overlays/x/lib`).
    dirs: std::collections::HashSet<Vec<u8>>,
    /// `bin/`, `lib/` (and each overlay's) and what is under them, at most
    /// [`MAX_WATCH`].
    watch: Vec<Vec<u8>>,
}

/// Where a store path sits relative to a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinned {
    /// Not under the snapshot's store: read it from disk as usual.
    Elsewhere,
    /// Under the store, and not an env file the digest saw: not loaded.
    Absent,
    /// Seen, but over [`MAX_KEPT`].
    TooLarge,
    /// The bytes digested.
    Bytes(std::sync::Arc<Vec<u8>>),
}

impl Snapshot {
    fn rel<'a>(&self, path: &'a Path) -> Option<&'a [u8]> {
        path.strip_prefix(&self.store)
            .ok()
            .map(|r| r.as_os_str().as_bytes())
    }

    /// What the digest saw at `path` (an env file).
    pub fn file(&self, path: &Path) -> Pinned {
        let Some(rel) = self.rel(path) else {
            return Pinned::Elsewhere;
        };
        match self.files.get(rel) {
            None => Pinned::Absent,
            Some(None) => Pinned::TooLarge,
            Some(Some(b)) => Pinned::Bytes(b.clone()),
        }
    }

    /// `None`: `path` is not under the store; else whether the digest saw a
    /// directory there.
    pub fn has_dir(&self, path: &Path) -> Option<bool> {
        self.rel(path).map(|r| self.dirs.contains(r))
    }

    /// The `bin/` and `lib/` paths to watch (absolute, under the store).
    pub fn watch(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.watch
            .iter()
            .map(|r| self.store.join(OsStr::from_bytes(r)))
    }

    /// Whether `rel` (relative to the store) is an env file of the store
    /// or of one of its overlays.
    fn is_env_file(rel: &[u8]) -> bool {
        let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
        match parts.as_slice() {
            [name] => ENV_NAMES.contains(name),
            [b"overlays", _, name] => ENV_NAMES.contains(name),
            _ => false,
        }
    }

    /// Whether `rel` is the `agentenv.toml` of the store or of one of its
    /// overlays.
    fn is_declarations(rel: &[u8]) -> bool {
        let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
        matches!(
            parts.as_slice(),
            [b"agentenv.toml"] | [b"overlays", _, b"agentenv.toml"]
        )
    }

    /// Whether `rel` is `bin`, `lib` (of the store or an overlay) or below.
    fn is_watched(rel: &[u8]) -> bool {
        let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
        matches!(
            parts.as_slice(),
            [b"bin" | b"lib", ..] | [b"overlays", _, b"bin" | b"lib", ..]
        )
    }
}

fn io_err(p: &Path, e: &std::io::Error) -> TrustError {
    TrustError::Io(p.to_path_buf(), crate::fsutil::io_kind(e))
}

/// `$XDG_STATE_HOME/agentenv` (when absolute), else
/// `$HOME/.local/state/agentenv`.
pub fn state_dir(env: &Env) -> Result<PathBuf, TrustError> {
    let abs = |k: &str| {
        crate::core::get(env, k)
            .map(Path::new)
            .filter(|p| p.is_absolute())
            .map(Path::to_path_buf)
    };
    if let Some(x) = abs("XDG_STATE_HOME") {
        return Ok(x.join("agentenv"));
    }
    abs("HOME")
        .map(|h| h.join(".local").join("state").join("agentenv"))
        .ok_or(TrustError::NoStateDir)
}

/// The directory holding the records.
pub fn records_dir(state: &Path) -> PathBuf {
    state.join("allowed")
}

fn check_dir(p: &Path) -> Result<bool, TrustError> {
    match fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(p, &e)),
        Ok(m) => {
            if !m.is_dir() {
                return Err(TrustError::UnsafeStateDir(
                    p.to_path_buf(),
                    "is not a directory",
                ));
            }
            if m.uid() != rustix::process::geteuid().as_raw() {
                return Err(TrustError::UnsafeStateDir(
                    p.to_path_buf(),
                    "is owned by another user",
                ));
            }
            if m.mode() & 0o022 != 0 {
                return Err(TrustError::UnsafeStateDir(
                    p.to_path_buf(),
                    "is writable by group or others",
                ));
            }
            Ok(true)
        }
    }
}

/// Check (and with `create`, make `0700`) the state dir and its records
/// dir. `Ok(false)`: they do not exist (and were not created). The hook's
/// stamps follow the same rule (`hook::write_stamp`).
pub(crate) fn usable_state(state: &Path, create: bool) -> Result<bool, TrustError> {
    let rec = records_dir(state);
    if create {
        // Nothing is made in another user's directory: root with that
        // user's HOME (`sudo -E`) would leave root-owned directories there.
        let mut up = rec.as_path();
        while let Some(parent) = up.parent() {
            up = parent;
            if let Ok(m) = fs::symlink_metadata(up) {
                let me = rustix::process::geteuid().as_raw();
                if m.uid() != me && m.uid() != 0 {
                    return Err(TrustError::UnsafeStateDir(
                        up.to_path_buf(),
                        "belongs to another user (nothing is created there)",
                    ));
                }
                break;
            }
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&rec)
            .map_err(|e| io_err(&rec, &e))?;
    }
    if !check_dir(state)? {
        return Ok(false);
    }
    check_dir(&rec)
}

/// The store's real path (the record is keyed by it).
pub fn canonical_store(store: &Path) -> Result<PathBuf, TrustError> {
    let real = fs::canonicalize(store).map_err(|_| TrustError::NoStore(store.to_path_buf()))?;
    if !real.is_dir() {
        return Err(TrustError::NoStore(store.to_path_buf()));
    }
    Ok(real)
}

fn record_path(state: &Path, real_store: &Path) -> PathBuf {
    let name = blake3::hash(real_store.as_os_str().as_bytes()).to_hex();
    records_dir(state).join(name.as_str())
}

/// The digest of everything under `store` (see the module docs), 64 hex
/// digits, within the default bounds (30 s, [`MAX_BYTES`]).
#[cfg(test)]
pub fn digest(store: &Path) -> Result<String, TrustError> {
    let b = Bounds::within(std::time::Duration::from_secs_f64(
        crate::process::DEFAULT_TIMEOUT_SECS,
    ));
    Ok(snapshot(store, b)?.0)
}

/// The digest of `store` and what it saw (see [`Snapshot`]), within
/// `bounds`.
pub fn snapshot(store: &Path, bounds: Bounds) -> Result<(String, Snapshot), TrustError> {
    let real = canonical_store(store)?;
    let mut walk = Digest {
        top: &real,
        h: blake3::Hasher::new(),
        count: 0,
        bounds,
        read: 0,
        snap: Snapshot {
            store: real.clone(),
            ..Default::default()
        },
    };
    walk.h.update(b"agentenv-trust-digest 1\0");
    walk.dir(&real, b"", 0)?;
    let hex = walk.h.finalize().to_hex().to_string();
    Ok((hex, walk.snap))
}

fn item(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// One digest walk: the store (named in a too-large error), the hash so
/// far, the entries visited, the bounds and bytes read, what is kept.
struct Digest<'a> {
    top: &'a Path,
    h: blake3::Hasher,
    count: usize,
    bounds: Bounds,
    read: u64,
    snap: Snapshot,
}

impl Digest<'_> {
    fn too_large(&self) -> TrustError {
        TrustError::TooLarge(self.top.to_path_buf())
    }

    fn in_time(&self) -> Result<(), TrustError> {
        if std::time::Instant::now() > self.bounds.deadline {
            return Err(TrustError::Timeout(self.top.to_path_buf()));
        }
        Ok(())
    }

    fn dir(&mut self, dir: &Path, rel: &[u8], depth: usize) -> Result<(), TrustError> {
        if depth > MAX_DEPTH {
            return Err(self.too_large());
        }
        self.in_time()?;
        let rd = fs::read_dir(dir).map_err(|e| io_err(dir, &e))?;
        let mut names = Vec::new();
        for e in rd {
            let e = e.map_err(|e| io_err(dir, &e))?;
            names.push(e.file_name());
            if self.count + names.len() > MAX_ENTRIES + 1 {
                return Err(self.too_large());
            }
        }
        names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        for name in names {
            if depth == 0 && name == OsStr::new(".cache") {
                continue;
            }
            self.count += 1;
            if self.count > MAX_ENTRIES {
                return Err(self.too_large());
            }
            let mut r = rel.to_vec();
            if !r.is_empty() {
                r.push(b'/');
            }
            r.extend_from_slice(name.as_bytes());
            if Snapshot::is_watched(&r) && self.snap.watch.len() < MAX_WATCH {
                self.snap.watch.push(r.clone());
            }
            self.entry(&dir.join(&name), &r, depth)?;
        }
        Ok(())
    }

    fn entry(&mut self, path: &Path, rel: &[u8], depth: usize) -> Result<(), TrustError> {
        item(&mut self.h, rel);
        let lm = fs::symlink_metadata(path).map_err(|e| io_err(path, &e))?;
        let m = if lm.file_type().is_symlink() {
            let target = fs::read_link(path).map_err(|e| io_err(path, &e))?;
            self.h.update(b"l");
            item(&mut self.h, target.as_os_str().as_bytes());
            match fs::metadata(path) {
                Ok(m) => m,
                Err(_) => {
                    self.h.update(b"-");
                    return Ok(());
                }
            }
        } else {
            lm
        };
        let ft = m.file_type();
        if ft.is_dir() {
            if rel.iter().filter(|b| **b == b'/').count() < 3 {
                self.snap.dirs.insert(rel.to_vec());
            }
            self.h.update(b"d");
            self.h.update(&(m.mode() & 0o7777).to_le_bytes());
            self.h.update(b"{");
            self.dir(path, rel, depth + 1)?;
            self.h.update(b"}");
        } else if ft.is_file() {
            self.h.update(b"f");
            self.h.update(&(m.mode() & 0o7777).to_le_bytes());
            self.file(path, rel)?;
        } else {
            // FIFO, socket, device: the kind only.
            self.h.update(b"o");
            self.h.update(&(m.mode() & 0o170000).to_le_bytes());
        }
        Ok(())
    }

    /// A regular file's length and content hash; an env file's bytes are
    /// kept. At most its size is read (one byte more tells a special file
    /// that reads on, such as `/proc/self/pagemap`), within the byte
    /// budget and the deadline.
    fn file(&mut self, path: &Path, rel: &[u8]) -> Result<(), TrustError> {
        // Non-blocking open: a file swapped for a FIFO cannot hang us.
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
            .open(path)
            .map_err(|e| io_err(path, &e))?;
        let fm = f.metadata().map_err(|e| io_err(path, &e))?;
        if !fm.is_file() {
            self.h.update(b"?");
            return Ok(());
        }
        let size = fm.len();
        if size > self.bounds.max_bytes.saturating_sub(self.read) {
            return Err(TrustError::OddFile(
                path.to_path_buf(),
                "the store's files are larger than the digest reads (1 GiB in all)",
            ));
        }
        // The env files, and the store's and its overlays' `agentenv.toml`
        // (their secret references resolve from the bytes allowed).
        let keep = Snapshot::is_env_file(rel) || Snapshot::is_declarations(rel);
        let mut kept = (keep && size <= MAX_KEPT).then(|| Vec::with_capacity(size as usize));
        let mut content = blake3::Hasher::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut len = 0u64;
        let mut limited = f.take(size + 1);
        loop {
            let n = limited.read(&mut buf).map_err(|e| io_err(path, &e))?;
            if n == 0 {
                break;
            }
            len += n as u64;
            if len > size {
                return Err(TrustError::OddFile(
                    path.to_path_buf(),
                    "it reads more than its size (a special file, such as one in /proc)",
                ));
            }
            content.update(&buf[..n]);
            if let Some(k) = kept.as_mut() {
                k.extend_from_slice(&buf[..n]);
            }
            self.in_time()?;
        }
        self.read += len;
        self.h.update(&len.to_le_bytes());
        self.h.update(content.finalize().as_bytes());
        if keep {
            self.snap
                .files
                .insert(rel.to_vec(), kept.map(std::sync::Arc::new));
        }
        Ok(())
    }
}

/// The trust state of `store` under the state dir `state` (default
/// bounds).
#[cfg(test)]
pub fn state_in(state: &Path, store: &Path) -> Result<TrustState, TrustError> {
    let b = Bounds::within(std::time::Duration::from_secs_f64(
        crate::process::DEFAULT_TIMEOUT_SECS,
    ));
    Ok(check(state, store, b)?.0)
}

/// The trust state of `store` and, when it was digested (allowed or
/// changed), what the digest saw: load from that snapshot, and what runs
/// is what was digested.
pub fn check(
    state: &Path,
    store: &Path,
    bounds: Bounds,
) -> Result<(TrustState, Option<Snapshot>), TrustError> {
    let real = canonical_store(store)?;
    if !usable_state(state, false)? {
        return Ok((TrustState::NotAllowed, None));
    }
    let rec = record_path(state, &real);
    let bytes = match read_record(&rec) {
        Some(b) => b,
        None => return Ok((TrustState::NotAllowed, None)),
    };
    let Some((stored_path, stored_digest)) = parse_record(&bytes) else {
        return Ok((TrustState::NotAllowed, None));
    };
    if stored_path != real.as_os_str().as_bytes() {
        return Ok((TrustState::NotAllowed, None));
    }
    let (d, snap) = snapshot(&real, bounds)?;
    if d == stored_digest {
        Ok((TrustState::Allowed, Some(snap)))
    } else {
        Ok((TrustState::Changed, None))
    }
}

fn read_record(rec: &Path) -> Option<Vec<u8>> {
    let m = fs::symlink_metadata(rec).ok()?;
    if !m.is_file() || m.uid() != rustix::process::geteuid().as_raw() || m.len() > 64 * 1024 {
        return None;
    }
    fs::read(rec).ok()
}

/// A record: `agentenv-trust 1\n<digest>\n<store path bytes>`.
fn parse_record(bytes: &[u8]) -> Option<(&[u8], String)> {
    let rest = bytes.strip_prefix(b"agentenv-trust 1\n")?;
    let nl = rest.iter().position(|b| *b == b'\n')?;
    let digest = std::str::from_utf8(&rest[..nl]).ok()?;
    if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((&rest[nl + 1..], digest.to_string()))
}

/// Record `store` (its real path and current digest) as allowed. Returns
/// the real path.
pub fn allow(state: &Path, store: &Path, bounds: Bounds) -> Result<PathBuf, TrustError> {
    let real = canonical_store(store)?;
    let (d, _) = snapshot(&real, bounds)?;
    usable_state(state, true)?;
    let mut rec = b"agentenv-trust 1\n".to_vec();
    rec.extend_from_slice(d.as_bytes());
    rec.push(b'\n');
    rec.extend_from_slice(real.as_os_str().as_bytes());
    let path = record_path(state, &real);
    crate::fsutil::write_atomic(&path, &rec, crate::fsutil::Mode::Exactly(0o600), false)
        .map_err(|e| io_err(&path, &e))?;
    Ok(real)
}

/// Every store a record says was allowed (its real path, as recorded),
/// sorted; whether it is still unchanged is for the gate to say. Nothing
/// when the state dir is not usable.
pub fn allowed_stores(state: &Path) -> Vec<PathBuf> {
    if !usable_state(state, false).unwrap_or(false) {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(records_dir(state)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| crate::fsutil::read_input(&e.path(), 1 << 16).ok())
        .filter_map(|rec| {
            let rest = rec.strip_prefix(b"agentenv-trust 1\n")?;
            let nl = rest.iter().position(|&b| b == b'\n')?;
            let path = &rest[nl + 1..];
            (!path.is_empty()).then(|| PathBuf::from(std::ffi::OsStr::from_bytes(path)))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Forget `store`. `Ok(true)` when a record was removed. A store that no
/// longer exists is forgotten by its lexical path.
pub fn deny(state: &Path, store: &Path) -> Result<bool, TrustError> {
    let real = fs::canonicalize(store).unwrap_or_else(|_| store.to_path_buf());
    if !usable_state(state, false)? {
        return Ok(false);
    }
    let path = record_path(state, &real);
    match fs::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(&path, &e)),
    }
}

/// The hook's project root: the nearest directory from `cwd` upwards that
/// holds a `.agents` directory, never `$HOME` itself or above it (when
/// `cwd` is under `$HOME`; `$HOME/.agents` is the user store).
pub fn find_project_root(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let home = home.filter(|h| h.is_absolute() && cwd.starts_with(h));
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if let Some(h) = home {
            if d == h || !d.starts_with(h) {
                return None;
            }
        }
        if d.join(".agents").is_dir() {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn bounds() -> Bounds {
        Bounds::within(std::time::Duration::from_secs(30))
    }

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    /// A temp dir holding the state dir `s` and an empty store `p/.agents`.
    fn state_and_store() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let t = tmp();
        let state = t.path().join("s");
        let store = t.path().join("p/.agents");
        fs::create_dir_all(&store).unwrap();
        (t, state, store)
    }

    #[test]
    fn allow_then_change_then_deny() {
        let t = tmp();
        let state = t.path().join("state/agentenv");
        let store = t.path().join("proj/.agents");
        fs::create_dir_all(store.join("bin")).unwrap();
        fs::write(store.join("env"), "A=1\n").unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::NotAllowed);
        allow(&state, &store, bounds()).unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::Allowed);
        let m = fs::metadata(&state).unwrap().permissions().mode() & 0o777;
        assert_eq!(m, 0o700);
        let rec = fs::read_dir(records_dir(&state))
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(rec.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        // .cache is not covered.
        fs::create_dir_all(store.join(".cache/env")).unwrap();
        fs::write(store.join(".cache/env/x"), "y").unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::Allowed);
        // A new file, a content change, a mode change all count.
        fs::write(store.join("bin/tool"), "#!/bin/sh\n").unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::Changed);
        allow(&state, &store, bounds()).unwrap();
        fs::set_permissions(store.join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::Changed);
        allow(&state, &store, bounds()).unwrap();
        fs::write(store.join("env"), "A=2\n").unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::Changed);
        assert!(deny(&state, &store).unwrap());
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::NotAllowed);
        assert!(!deny(&state, &store).unwrap());
    }

    /// A fixed store: two files with set modes, a subdirectory, a relative
    /// symlink, and a `.cache` that is not covered.
    fn fixed_store(store: &Path) {
        fs::create_dir_all(store.join("bin")).unwrap();
        fs::create_dir_all(store.join(".cache/env")).unwrap();
        fs::write(store.join(".cache/env/k"), "ignored").unwrap();
        fs::write(store.join("env"), "A=1\n").unwrap();
        fs::write(store.join("bin/tool"), "#!/bin/sh\necho hi\n").unwrap();
        std::os::unix::fs::symlink("bin/tool", store.join("tool-link")).unwrap();
        fs::set_permissions(store.join("env"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::set_permissions(store.join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(store.join("bin"), fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The digest format is a promise to every user who ran `allow`: if it
    /// changed, every allowed store would silently turn "changed". The
    /// value was produced by the release before the digest walk was
    /// refactored (8709bce) on the same tree.
    #[test]
    fn the_digest_of_a_fixed_store_is_stable() {
        let (_t, _state, store) = state_and_store();
        fixed_store(&store);
        assert_eq!(digest(&store).unwrap(), GOLDEN_DIGEST);
    }

    const GOLDEN_DIGEST: &str = "62a89c695fed6141fd2d0e113bde9c479233de2e1b6fdd93e0200f14c75c371f";

    #[test]
    fn a_snapshot_keeps_env_files_dirs_and_the_bin_lib_paths() {
        let (_t, _state, store) = state_and_store();
        fixed_store(&store);
        fs::create_dir_all(store.join("overlays/o/lib/pkg")).unwrap();
        fs::write(store.join("overlays/o/env.py"), "print('{}')\n").unwrap();
        fs::write(store.join("overlays/o/lib/pkg/m.py"), "").unwrap();
        fs::write(store.join("overlays/o/agentenv.toml"), "[vars]\n").unwrap();
        fs::write(store.join("overlays/o/lib/agentenv.toml"), "").unwrap();
        fs::write(store.join("notes.txt"), "not an env file").unwrap();
        let (d, snap) = snapshot(&store, bounds()).unwrap();
        assert_eq!(d.len(), 64);
        let real = fs::canonicalize(&store).unwrap();
        assert_eq!(
            snap.file(&real.join("env")),
            Pinned::Bytes(std::sync::Arc::new(b"A=1\n".to_vec()))
        );
        assert!(matches!(
            snap.file(&real.join("overlays/o/env.py")),
            Pinned::Bytes(_)
        ));
        // The overlay's declarations are kept (its references resolve
        // from them); an `agentenv.toml` deeper down is not one.
        assert_eq!(
            snap.file(&real.join("overlays/o/agentenv.toml")),
            Pinned::Bytes(std::sync::Arc::new(b"[vars]\n".to_vec()))
        );
        assert_eq!(
            snap.file(&real.join("overlays/o/lib/agentenv.toml")),
            Pinned::Absent
        );
        assert_eq!(snap.file(&real.join("notes.txt")), Pinned::Absent);
        assert_eq!(snap.file(&real.join("pre.env")), Pinned::Absent);
        assert_eq!(snap.file(Path::new("/elsewhere/env")), Pinned::Elsewhere);
        assert_eq!(snap.has_dir(&real.join("bin")), Some(true));
        assert_eq!(snap.has_dir(&real.join("lib")), Some(false));
        assert_eq!(snap.has_dir(Path::new("/elsewhere/bin")), None);
        let watch: Vec<PathBuf> = snap.watch().collect();
        for p in [
            "bin",
            "bin/tool",
            "overlays/o/lib",
            "overlays/o/lib/pkg/m.py",
        ] {
            assert!(watch.contains(&real.join(p)), "{p}: {watch:?}");
        }
        assert!(!watch.contains(&real.join("env")));
    }

    #[test]
    fn a_digest_past_its_deadline_or_budget_stops() {
        let (_t, _state, store) = state_and_store();
        fixed_store(&store);
        let late = Bounds {
            deadline: std::time::Instant::now() - std::time::Duration::from_secs(1),
            max_bytes: MAX_BYTES,
        };
        assert!(matches!(
            snapshot(&store, late),
            Err(TrustError::Timeout(_))
        ));
        let small = Bounds {
            max_bytes: 3,
            ..bounds()
        };
        match snapshot(&store, small) {
            Err(TrustError::OddFile(p, _)) => {
                assert!(p.ends_with("bin/tool") || p.ends_with("env"))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn symlink_targets_are_covered() {
        let (t, state, store) = state_and_store();
        fs::write(t.path().join("p/real.env"), "A=1\n").unwrap();
        std::os::unix::fs::symlink("../real.env", store.join("env")).unwrap();
        allow(&state, &store, bounds()).unwrap();
        fs::write(t.path().join("p/real.env"), "A=2\n").unwrap();
        assert_eq!(state_in(&state, &store).unwrap(), TrustState::Changed);
    }

    #[test]
    fn writable_state_dir_is_refused() {
        let (_t, state, store) = state_and_store();
        allow(&state, &store, bounds()).unwrap();
        fs::set_permissions(&state, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(matches!(
            state_in(&state, &store),
            Err(TrustError::UnsafeStateDir(..))
        ));
        assert!(matches!(
            allow(&state, &store, bounds()),
            Err(TrustError::UnsafeStateDir(..))
        ));
    }

    #[test]
    fn project_root_walks_up_but_not_to_home() {
        let t = tmp();
        let home = t.path().join("home");
        fs::create_dir_all(home.join(".agents")).unwrap();
        fs::create_dir_all(home.join("p/.agents")).unwrap();
        fs::create_dir_all(home.join("p/a/b")).unwrap();
        fs::create_dir_all(home.join("q/c")).unwrap();
        let h = Some(home.as_path());
        assert_eq!(
            find_project_root(&home.join("p/a/b"), h),
            Some(home.join("p"))
        );
        assert_eq!(find_project_root(&home.join("q/c"), h), None);
        assert_eq!(find_project_root(&home, h), None);
        fs::create_dir_all(t.path().join("out/.agents")).unwrap();
        fs::create_dir_all(t.path().join("out/x")).unwrap();
        assert_eq!(
            find_project_root(&t.path().join("out/x"), h),
            Some(t.path().join("out"))
        );
    }
}
