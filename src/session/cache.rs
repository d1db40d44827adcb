//! `--cache`: owner-only replay of an identical earlier rendering.
//!
//! As `dotagents env --cache`: an entry lives at `<user
//! store>/.cache/env/<key>` (also under `-g`), is a hit while `now − mtime` is
//! at least −2 s and less than 300 s and it is UTF-8, and is replayed verbatim
//! before any layer runs. A miss stores the rendering and removes every other
//! regular file in the directory that is older than 300 s. Writing never fails
//! the command.
//!
//! Differences from dotagents (docs/fast.md#--cache):
//! * the directory is created `0700` and every entry is written `0600`
//!   (an entry holds environment values: secrets);
//! * an existing cache directory that is not a directory owned by the
//!   effective user, or that is group- or world-writable, is not used at
//!   all — [`usable_dir`] says so and the caller warns and runs uncached
//!   (another user could otherwise plant a rendering that the next shell
//!   `eval`s, or read one);
//! * `.cache` and `.cache/env` are never followed when they are symbolic
//!   links: [`usable_dir`] refuses them (`lstat`), and every read, write
//!   and removal works relative to a directory handle opened with
//!   `O_NOFOLLOW | O_DIRECTORY`, so a link swapped in later is not followed
//!   either (a `.cache/env -> ~/.ssh` link made the reference's cleanup
//!   delete the files of `~/.ssh` older than 300 s);
//! * cleanup removes only regular files whose names look like cache keys
//!   (64 hex digits), never anything else in the directory;
//! * an entry not owned by the effective user, or that is a symbolic link
//!   (opened with `O_NOFOLLOW`), is never replayed;
//! * the key (blake3 over NUL-terminated items) also covers agentenv's
//!   version and the layer timeout.

use rustix::fs::{AtFlags, Mode, OFlags};
use std::ffi::OsStr;
use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// An entry is fresh while younger than this.
pub const TTL: Duration = Duration::from_secs(300);
/// How far in the future an entry's mtime may be and still count.
pub const CLOCK_SLACK: Duration = Duration::from_secs(2);

/// `<user store>/.cache/env`.
pub fn dir_for(user_root: &Path) -> PathBuf {
    user_root.join(".cache").join("env")
}

/// Builds a cache key: blake3 over NUL-terminated items. The first items
/// are always `agentenv`, its version and the timeout.
#[derive(Debug, Clone)]
pub struct KeyBuilder {
    h: blake3::Hasher,
}

impl KeyBuilder {
    /// `timeout_secs`: the effective per-layer timeout.
    pub fn new(timeout_secs: f64) -> Self {
        let mut k = KeyBuilder {
            h: blake3::Hasher::new(),
        };
        k.item("agentenv");
        k.item(env!("CARGO_PKG_VERSION"));
        k.item(format!("timeout {timeout_secs}"));
        k
    }

    /// One item (its bytes, then a NUL).
    pub fn item(&mut self, bytes: impl AsRef<[u8]>) -> &mut Self {
        self.h.update(bytes.as_ref());
        self.h.update(b"\0");
        self
    }

    /// One item made of parts joined by a space.
    pub fn parts(&mut self, parts: &[&[u8]]) -> &mut Self {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                self.h.update(b" ");
            }
            self.h.update(p);
        }
        self.h.update(b"\0");
        self
    }

    /// `<label> <path> <sig>` for a file that may be missing.
    pub fn file(&mut self, label: &str, path: &Path) -> &mut Self {
        let sig = stat_sig(path);
        self.parts(&[
            label.as_bytes(),
            path.as_os_str().as_bytes(),
            sig.as_bytes(),
        ])
    }

    /// `lib <path> <sig>`, then `<file> <sig>` for every file below it when
    /// it is a directory (sorted, `__pycache__` skipped).
    pub fn lib(&mut self, path: &Path) -> &mut Self {
        self.file("lib", path);
        if path.is_dir() {
            for (f, sig) in tree_sig(path) {
                self.parts(&[f.as_os_str().as_bytes(), sig.as_bytes()]);
            }
        }
        self
    }

    /// Every `K=V` of `env` in key order (an [`crate::core::Env`] is sorted).
    pub fn env(&mut self, env: &crate::core::Env) -> &mut Self {
        for (k, v) in env {
            self.h.update(k.as_bytes());
            self.h.update(b"=");
            self.h.update(v.as_bytes());
            self.h.update(b"\0");
        }
        self
    }

    /// The key, 64 hex digits.
    pub fn finish(&self) -> String {
        self.h.finalize().to_hex().to_string()
    }
}

/// The key of an `agentenv env` run: everything the reference's key covers
/// (`dotagents env --cache`'s) that agentenv reads — interpreter, cwd, scope
/// level, user, scope, project and system roots, the format as given (`auto` →
/// the detected canonical name), diff or full, every overlay, every env-file
/// candidate of both tiers with its signature (missing ones included), every
/// `lib` candidate and the files below it, the whole base env — plus
/// agentenv's version, the timeout and an explicit agent.
pub fn key_for(p: &super::Prepared, base: &crate::core::Env, format: &str, diff: bool) -> String {
    key_with(p, base, format, diff, false)
}

/// [`key_for`], and for `--public-only` (whose output also depends on the
/// declarations) a key of its own that covers the signature of every
/// store's and overlay's `agentenv.toml`, so that an edited declaration
/// is never answered from an entry rendered before it.
pub fn key_with(
    p: &super::Prepared,
    base: &crate::core::Env,
    format: &str,
    diff: bool,
    public_only: bool,
) -> String {
    let s = &p.scope;
    let opt = |o: &Option<PathBuf>| o.as_ref().map(|p| p.as_os_str().as_bytes().to_vec());
    let mut k = KeyBuilder::new(p.timeout.as_secs_f64());
    k.item(opt(&p.interpreter).unwrap_or_default())
        .item(s.cwd.as_os_str().as_bytes())
        .item(s.level)
        .item(s.user_root.as_os_str().as_bytes())
        .item(s.agents_root.as_os_str().as_bytes())
        .item(opt(&s.project_root).unwrap_or_default())
        .item(opt(&s.system_root).unwrap_or_default())
        .item(format)
        .item(match (diff, public_only) {
            (true, false) => "diff",
            (false, false) => "full",
            (true, true) => "diff public-only",
            (false, true) => "full public-only",
        })
        .item(p.agent.as_deref().unwrap_or(""));
    // Every key covers the declarations: `--public-only`'s output
    // depends on them, and every output on their secret references.
    let dirs = s.stores.iter().map(|st| &st.path);
    for dir in dirs.chain(s.overlays.iter().map(|o| &o.path)) {
        let toml = s.cwd.join(dir).join(super::sensitive::FILE_NAME);
        k.file("declarations", &toml);
    }
    for o in &s.overlays {
        k.parts(&[b"overlay", o.name.as_bytes(), o.path.as_os_str().as_bytes()]);
    }
    for f in &p.env_files {
        let path = s.cwd.join(&f.path);
        k.file(&f.level, &path);
    }
    for l in &p.lib_candidates {
        k.lib(&s.cwd.join(l));
    }
    k.env(base);
    k.finish()
}

/// `mode:inode:mtime_ns:size`, or `-` when the path cannot be stat'ed.
pub fn stat_sig(path: &Path) -> String {
    match fs::metadata(path) {
        Ok(m) => format!(
            "{}:{}:{}:{}",
            m.mode(),
            m.ino(),
            m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            m.size()
        ),
        Err(_) => "-".to_string(),
    }
}

/// Every file below `dir` with its signature: names sorted per directory,
/// files of a directory before its subdirectories (the order of Python's
/// `os.walk` as the reference uses it), `__pycache__` skipped, symlinked
/// directories not followed.
pub fn tree_sig(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    walk(dir, &mut out, 0);
    out
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>, depth: usize) {
    if depth > 64 {
        return;
    }
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let rd = match fs::read_dir(dir) {
        Ok(r) => r,
        Err(_) => return,
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir {
            if name != OsStr::new("__pycache__") {
                dirs.push(name);
            }
        } else {
            files.push(name);
        }
    }
    files.sort();
    dirs.sort();
    for f in files {
        let p = dir.join(f);
        let s = stat_sig(&p);
        out.push((p, s));
    }
    for d in dirs {
        walk(&dir.join(d), out, depth + 1);
    }
}

/// Why an existing cache directory is not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsafe {
    NotADirectory,
    /// `.cache` or `.cache/env` is a symbolic link (never followed).
    Symlink,
    OtherOwner,
    Writable,
}

impl Unsafe {
    pub fn describe(self) -> &'static str {
        match self {
            Unsafe::NotADirectory => "is not a directory",
            Unsafe::Symlink => "is reached through a symbolic link (not followed)",
            Unsafe::OtherOwner => "is owned by another user",
            Unsafe::Writable => "is writable by group or others",
        }
    }
}

/// The two components below the user store that are never followed
/// (`.cache`, `env`), and the directory above them (followed: the store
/// itself may be a link).
fn split_dir(dir: &Path) -> (PathBuf, Vec<&OsStr>) {
    let mut names = Vec::new();
    let mut top = dir;
    for _ in 0..2 {
        match (top.parent(), top.file_name()) {
            (Some(p), Some(n)) => {
                names.push(n);
                top = p;
            }
            _ => break,
        }
    }
    names.reverse();
    let top = if top.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        top.to_path_buf()
    };
    (top, names)
}

/// `Ok` when `dir` is missing (it will be created owner-only) or is a
/// directory owned by the effective user that neither group nor others can
/// write, and neither it nor its parent (`.cache`) is a symbolic link
/// (checked with `lstat`; nothing is followed).
pub fn usable_dir(dir: &Path) -> Result<(), Unsafe> {
    let (top, names) = split_dir(dir);
    let mut p = top;
    for (i, n) in names.iter().enumerate() {
        p.push(n);
        let Ok(m) = fs::symlink_metadata(&p) else {
            return Ok(());
        };
        if m.file_type().is_symlink() {
            return Err(Unsafe::Symlink);
        }
        if i + 1 < names.len() {
            if !m.is_dir() {
                // `.cache` is a file: nothing below it exists, and
                // creating it fails (silently, as any cache write).
                return Ok(());
            }
        } else {
            check_meta(&m)?;
        }
    }
    Ok(())
}

fn check_meta(m: &fs::Metadata) -> Result<(), Unsafe> {
    if !m.is_dir() {
        return Err(Unsafe::NotADirectory);
    }
    if m.uid() != rustix::process::geteuid().as_raw() {
        return Err(Unsafe::OtherOwner);
    }
    if m.mode() & 0o022 != 0 {
        return Err(Unsafe::Writable);
    }
    Ok(())
}

fn unsafe_err(u: Unsafe) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, u.describe())
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// A handle on the cache directory: the directory above `.cache` is opened
/// normally, then `.cache` and `env` with `O_NOFOLLOW | O_DIRECTORY` (a
/// link is `ELOOP`, a file `ENOTDIR`), created `0700` first when `create`
/// is set. The handle's own `fstat` must pass [`usable_dir`]'s rule, so a
/// directory swapped in after the check is judged, not its path.
fn open_dir(dir: &Path, create: bool) -> std::io::Result<OwnedFd> {
    let (top, names) = split_dir(dir);
    if create {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&top)?;
    }
    let mut fd: OwnedFd =
        rustix::fs::open(&top, DIR_FLAGS.difference(OFlags::NOFOLLOW), Mode::empty())?;
    for n in names {
        if create {
            match rustix::fs::mkdirat(&fd, n, Mode::from_raw_mode(0o700)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        fd = match rustix::fs::openat(&fd, n, DIR_FLAGS, Mode::empty()) {
            Ok(f) => f,
            Err(rustix::io::Errno::LOOP) => return Err(unsafe_err(Unsafe::Symlink)),
            Err(e) => return Err(e.into()),
        };
    }
    let f = fs::File::from(fd);
    check_meta(&f.metadata()?).map_err(unsafe_err)?;
    Ok(f.into())
}

/// Create the cache directory (`0700`, `.cache` and `env` created and
/// opened without following links). An error when it cannot be made or is
/// not usable (see [`usable_dir`]).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    open_dir(dir, true).map(drop)
}

/// A name [`lookup`] and [`store`] accept (it cannot leave the directory).
fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A name cleanup may remove: what [`KeyBuilder::finish`] gives, 64
/// lowercase hex digits.
fn looks_like_key(name: &[u8]) -> bool {
    name.len() == 64 && name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The entry for `key`, if fresh (see the module docs).
pub fn lookup(dir: &Path, key: &str) -> Option<Vec<u8>> {
    lookup_at(dir, key, SystemTime::now())
}

/// [`lookup`] with an explicit "now".
pub fn lookup_at(dir: &Path, key: &str, now: SystemTime) -> Option<Vec<u8>> {
    use std::io::Read;
    if !valid_key(key) {
        return None;
    }
    let d = open_dir(dir, false).ok()?;
    // O_NOFOLLOW: an entry that is a symlink is ELOOP, never replayed;
    // O_NONBLOCK: a FIFO planted under the key cannot block the open.
    let fd = rustix::fs::openat(
        &d,
        key,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut f = fs::File::from(fd);
    let m = f.metadata().ok()?;
    if !m.is_file() || m.uid() != rustix::process::geteuid().as_raw() {
        return None;
    }
    let mtime = m.modified().ok()?;
    let fresh = match now.duration_since(mtime) {
        Ok(age) => age < TTL,
        Err(e) => e.duration() <= CLOCK_SLACK,
    };
    if !fresh {
        return None;
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.read_to_end(&mut bytes).ok()?;
    std::str::from_utf8(&bytes).ok()?;
    Some(bytes)
}

/// Store `text` under `key` (dir `0700`, entry `0600`, atomic), then remove
/// every other regular file in the directory whose name looks like a cache
/// key and that is older than the TTL. Any error → not cached, silently.
pub fn store(dir: &Path, key: &str, text: &[u8]) {
    let _ = try_store(dir, key, text, SystemTime::now());
}

static TMP_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Write `text` to a new temp file in `d` (`O_EXCL | O_NOFOLLOW`, `0600`),
/// sync it and rename it over `key`: a rename replaces whatever `key` was
/// (a link included) and never writes through it.
fn write_entry(d: &OwnedFd, key: &str, text: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |t| t.subsec_nanos());
    let mut tries = 0;
    let (name, fd) = loop {
        tries += 1;
        let seq = TMP_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!(".agentenv-{}-{nanos:x}-{seq}.tmp", std::process::id());
        match rustix::fs::openat(
            d,
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        ) {
            Ok(fd) => break (name, fd),
            Err(rustix::io::Errno::EXIST) if tries < 100 => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let result = (|| {
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(0o600))?;
        let mut f = fs::File::from(fd);
        f.write_all(text)?;
        f.sync_all()?;
        drop(f);
        rustix::fs::renameat(d, name.as_str(), d, key)?;
        let _ = rustix::fs::fsync(d);
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(d, name.as_str(), AtFlags::empty());
    }
    result
}

fn try_store(dir: &Path, key: &str, text: &[u8], now: SystemTime) -> std::io::Result<()> {
    if !valid_key(key) {
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    let d = open_dir(dir, true)?;
    write_entry(&d, key, text)?;
    let nanos = |t: SystemTime| match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    let cutoff = nanos(now) - TTL.as_nanos() as i128;
    let mut entries = rustix::fs::Dir::read_from(&d)?;
    while let Some(Ok(e)) = entries.read() {
        let name = e.file_name();
        let bytes = name.to_bytes();
        if bytes == key.as_bytes() || !looks_like_key(bytes) {
            continue;
        }
        // lstat, relative to the handle: a link is not a regular file.
        let Ok(st) = rustix::fs::statat(&d, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let regular = rustix::fs::FileType::from_raw_mode(st.st_mode as _)
            == rustix::fs::FileType::RegularFile;
        let mtime = st.st_mtime as i128 * 1_000_000_000 + st.st_mtime_nsec as i128;
        if regular && mtime < cutoff {
            let _ = rustix::fs::unlinkat(&d, name, AtFlags::empty());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn set_mtime(p: &Path, t: SystemTime) {
        fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn store_then_lookup_with_modes() {
        let d = tempfile::tempdir().unwrap();
        let dir = dir_for(d.path());
        store(&dir, "abc123", b"export A='1'\n");
        assert_eq!(lookup(&dir, "abc123").unwrap(), b"export A='1'\n");
        let dm = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        let fm = fs::metadata(dir.join("abc123"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!((dm, fm), (0o700, 0o600));
        assert!(lookup(&dir, "other").is_none());
    }

    #[test]
    fn ttl_and_clock_slack() {
        let d = tempfile::tempdir().unwrap();
        let dir = dir_for(d.path());
        store(&dir, "k", b"x");
        let p = dir.join("k");
        let now = SystemTime::now();
        let cases = [
            (-299i64, true),
            (-300, false),
            (1, true),
            (2, true),
            (5, false),
        ];
        for (offset, hit) in cases {
            let t = if offset < 0 {
                now - Duration::from_secs((-offset) as u64)
            } else {
                now + Duration::from_secs(offset as u64)
            };
            set_mtime(&p, t);
            assert_eq!(lookup_at(&dir, "k", now).is_some(), hit, "offset {offset}");
        }
    }

    #[test]
    fn not_utf8_is_a_miss() {
        let d = tempfile::tempdir().unwrap();
        let dir = dir_for(d.path());
        store(&dir, "k", b"\xff");
        assert!(lookup(&dir, "k").is_none());
    }

    #[test]
    fn stale_entries_are_removed_on_store() {
        let d = tempfile::tempdir().unwrap();
        let dir = dir_for(d.path());
        let (old, young, new) = ("a".repeat(64), "b".repeat(64), "c".repeat(64));
        store(&dir, &old, b"o");
        store(&dir, &young, b"y");
        // Old, but not named like a key: never removed.
        store(&dir, "notakey", b"k");
        let stale = SystemTime::now() - Duration::from_secs(301);
        set_mtime(&dir.join(&old), stale);
        set_mtime(&dir.join("notakey"), stale);
        fs::create_dir(dir.join("d".repeat(64))).unwrap();
        store(&dir, &new, b"n");
        assert!(!dir.join(&old).exists());
        assert!(dir.join(&young).exists());
        assert!(dir.join("notakey").exists());
        assert!(dir.join("d".repeat(64)).exists());
    }

    #[test]
    fn linked_cache_dirs_and_entries_are_never_followed() {
        let d = tempfile::tempdir().unwrap();
        let k = "e".repeat(64);
        let stale = SystemTime::now() - Duration::from_secs(301);
        let victim = d.path().join("victim");
        let outer_env = d.path().join("outer/env");
        for v in [&victim, &outer_env] {
            fs::create_dir_all(v).unwrap();
            fs::set_permissions(v, fs::Permissions::from_mode(0o700)).unwrap();
            fs::write(v.join(&k), "secret").unwrap();
            set_mtime(&v.join(&k), stale);
        }
        // s1: .cache/env -> victim; s2: .cache -> outer (holding env/).
        let s1 = d.path().join("s1");
        fs::create_dir_all(s1.join(".cache")).unwrap();
        std::os::unix::fs::symlink(&victim, s1.join(".cache/env")).unwrap();
        let s2 = d.path().join("s2");
        fs::create_dir(&s2).unwrap();
        std::os::unix::fs::symlink(d.path().join("outer"), s2.join(".cache")).unwrap();
        for s in [&s1, &s2] {
            let dir = dir_for(s);
            assert_eq!(usable_dir(&dir), Err(Unsafe::Symlink));
            assert!(create_dir(&dir).is_err());
            store(&dir, &"f".repeat(64), b"x");
            set_mtime(&dir.join(&k), SystemTime::now());
            assert!(lookup(&dir, &k).is_none());
            set_mtime(&dir.join(&k), stale);
        }
        for v in [&victim, &outer_env] {
            assert_eq!(fs::read(v.join(&k)).unwrap(), b"secret");
            assert!(!v.join("f".repeat(64)).exists());
        }
        // An entry that is a link to a fresh file of ours is not replayed,
        // and a store replaces the link, never writing through it.
        let dir = dir_for(d.path().join("s3").as_path());
        store(&dir, "real", b"x");
        let target = d.path().join("target");
        fs::write(&target, "planted").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("k")).unwrap();
        assert!(lookup(&dir, "k").is_none());
        store(&dir, "k", b"mine");
        assert_eq!(fs::read(&target).unwrap(), b"planted");
        assert_eq!(lookup(&dir, "k").unwrap(), b"mine");
    }

    #[test]
    fn unsafe_dirs_are_not_used() {
        let d = tempfile::tempdir().unwrap();
        let dir = dir_for(d.path());
        store(&dir, "k", b"x");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(usable_dir(&dir), Err(Unsafe::Writable));
        assert!(lookup(&dir, "k").is_none());
        store(&dir, "k2", b"y");
        assert!(!dir.join("k2").exists());
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o750)).unwrap();
        assert!(lookup(&dir, "k").is_some());
        let f = d.path().join("file");
        fs::write(&f, "").unwrap();
        assert_eq!(usable_dir(&f), Err(Unsafe::NotADirectory));
        if rustix::process::geteuid().as_raw() != 0 {
            // "/" is owned by root.
            assert_eq!(usable_dir(Path::new("/")), Err(Unsafe::OtherOwner));
        }
    }

    #[test]
    fn os_errors_mean_not_cached() {
        let d = tempfile::tempdir().unwrap();
        fs::write(d.path().join(".cache"), "a file").unwrap();
        let dir = dir_for(d.path());
        store(&dir, "k", b"x");
        assert!(lookup(&dir, "k").is_none());
    }

    #[test]
    fn key_covers_items_and_separates_them() {
        let k = |f: &dyn Fn(&mut KeyBuilder)| {
            let mut b = KeyBuilder::new(30.0);
            f(&mut b);
            b.finish()
        };
        let a = k(&|b| {
            b.item("ab").item("c");
        });
        let b2 = k(&|b| {
            b.item("a").item("bc");
        });
        assert_ne!(a, b2);
        assert_eq!(a.len(), 64);
        let mut t1 = KeyBuilder::new(30.0);
        let mut t2 = KeyBuilder::new(31.0);
        t1.item("x");
        t2.item("x");
        assert_ne!(t1.finish(), t2.finish());
    }

    #[test]
    fn file_and_lib_signatures_change() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("env");
        let key = |b: &mut KeyBuilder| b.file("user", &f).lib(&d.path().join("lib")).finish();
        let k0 = key(&mut KeyBuilder::new(30.0));
        fs::write(&f, "A=1\n").unwrap();
        let k1 = key(&mut KeyBuilder::new(30.0));
        assert_ne!(k0, k1);
        fs::create_dir_all(d.path().join("lib/pkg/__pycache__")).unwrap();
        let k2 = key(&mut KeyBuilder::new(30.0));
        assert_ne!(k1, k2);
        fs::write(d.path().join("lib/pkg/__pycache__/x.pyc"), "c").unwrap();
        // __pycache__ content does not count, but the dir's own mtime is not
        // part of the lib signature below the root either.
        let k3 = key(&mut KeyBuilder::new(30.0));
        assert_eq!(k2, k3);
        fs::write(d.path().join("lib/pkg/m.py"), "x").unwrap();
        let k4 = key(&mut KeyBuilder::new(30.0));
        assert_ne!(k3, k4);
        assert_eq!(tree_sig(&d.path().join("lib")).len(), 1);
    }
}
