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

use super::Prepared;
use crate::core::Env;
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
/// are always `agentenv`, its version and the timeout. Each item also has a
/// label (`$NAME`, `file <path>`, `the current directory` …) so that a miss
/// can say which of them changed since the last run ([`KeyParts`]).
#[derive(Debug, Clone)]
pub struct KeyBuilder {
    h: blake3::Hasher,
    parts: Vec<(String, blake3::Hash)>,
}

impl KeyBuilder {
    /// `timeout_secs`: the effective per-layer timeout.
    pub fn new(timeout_secs: f64) -> Self {
        let mut k = KeyBuilder {
            h: blake3::Hasher::new(),
            parts: Vec::new(),
        };
        k.labelled("agentenv", "agentenv");
        k.labelled("agentenv's version", env!("CARGO_PKG_VERSION"));
        k.labelled("the timeout", format!("timeout {timeout_secs}"));
        k
    }

    /// One item (its bytes, then a NUL) under `label`.
    pub fn labelled(&mut self, label: impl Into<String>, bytes: impl AsRef<[u8]>) -> &mut Self {
        let bytes = bytes.as_ref();
        self.h.update(bytes);
        self.h.update(b"\0");
        self.parts.push((label.into(), blake3::hash(bytes)));
        self
    }

    /// One item made of parts joined by a space, under `label`.
    pub fn parts(&mut self, label: impl Into<String>, parts: &[&[u8]]) -> &mut Self {
        self.labelled(label, parts.join(&b' '))
    }

    /// `<kind> <path> <sig>` for a file that may be missing.
    pub fn file(&mut self, kind: &str, path: &Path) -> &mut Self {
        let sig = stat_sig(path);
        self.parts(
            format!("file {}", path.display()),
            &[kind.as_bytes(), path.as_os_str().as_bytes(), sig.as_bytes()],
        )
    }

    /// `lib <path> <sig>`, then `<file> <sig>` for every file below it when
    /// it is a directory (sorted, `__pycache__` skipped).
    pub fn lib(&mut self, path: &Path) -> &mut Self {
        self.file("lib", path);
        if path.is_dir() {
            for (f, sig) in tree_sig(path) {
                self.parts(
                    format!("file {}", f.display()),
                    &[f.as_os_str().as_bytes(), sig.as_bytes()],
                );
            }
        }
        self
    }

    /// Every `K=V` of `env` in key order (an [`crate::core::Env`] is
    /// sorted), except the names `skip` leaves out.
    pub fn env(&mut self, env: &crate::core::Env, skip: impl Fn(&str) -> bool) -> &mut Self {
        for (k, v) in env {
            if k.to_str().is_some_and(&skip) {
                continue;
            }
            let item = [k.as_bytes(), b"=", v.as_bytes()].concat();
            self.labelled(format!("${}", k.to_string_lossy()), item);
        }
        self
    }

    /// The key, 64 hex digits.
    pub fn finish(&self) -> String {
        self.h.finalize().to_hex().to_string()
    }
}

/// Variables that change with every shell or agent session and that a
/// store does not read: `env --diff --cache` (and the shell hook and the
/// agent hooks, which render a diff) leave them out of the key, so that
/// re-entering a project from another directory (`OLDPWD`), a nested
/// shell (`SHLVL`), the last command (`_`) or a new Claude Code session
/// (`CLAUDE_ENV_FILE`) still hits. One of them stays in the key when an
/// env file of the walk mentions it by name (a plain file's `$OLDPWD`, an
/// `env.py`'s `os.environ["SHLVL"]`): then it can change the result. A
/// full rendering (without `--diff`) prints them, so there every variable
/// counts.
pub const SESSION_VARIABLES: &[&str] = &[
    "_",
    "ALACRITTY_WINDOW_ID",
    "CLAUDE_ENV_FILE",
    "CODEX_ENV_FILE",
    "GNOME_TERMINAL_SCREEN",
    "ITERM_SESSION_ID",
    "KITTY_PID",
    "KITTY_WINDOW_ID",
    "KONSOLE_DBUS_SESSION",
    "KONSOLE_DBUS_WINDOW",
    "OLDPWD",
    "SHELL_SESSION_ID",
    "SHLVL",
    "SSH_CLIENT",
    "SSH_CONNECTION",
    "SSH_TTY",
    "STY",
    "TERM_SESSION_ID",
    "TMUX_PANE",
    "WEZTERM_PANE",
    "WINDOWID",
    "XDG_SESSION_ID",
];

/// Whether `text` names `name` as a word (not inside a longer name).
fn mentions(text: &[u8], name: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let n = name.as_bytes();
    let mut from = 0;
    while let Some(at) = text[from..].windows(n.len()).position(|w| w == n) {
        let at = from + at;
        let before = at.checked_sub(1).map(|i| text[i]);
        let after = text.get(at + n.len()).copied();
        if !before.is_some_and(word) && !after.is_some_and(word) {
            return true;
        }
        from = at + 1;
    }
    false
}

/// The [`SESSION_VARIABLES`] of `base` that no env file of the walk
/// mentions: the ones a `--diff` key leaves out.
fn unread_session_variables(p: &super::Prepared, base: &crate::core::Env) -> Vec<&'static str> {
    let present: Vec<&'static str> = SESSION_VARIABLES
        .iter()
        .copied()
        .filter(|n| crate::core::get(base, n).is_some())
        .collect();
    if present.is_empty() {
        return present;
    }
    let mut texts = Vec::new();
    for f in &p.env_files {
        match read_for_mentions(&p.scope.cwd.join(&f.path)) {
            Ok(Some(text)) => texts.push(text),
            Ok(None) => {}
            // Unreadable or too large: every session variable stays.
            Err(()) => return Vec::new(),
        }
    }
    present
        .into_iter()
        .filter(|n| !texts.iter().any(|t| mentions(t, n)))
        .collect()
}

/// An env file's bytes for [`mentions`]: `Ok(None)` when there is no
/// regular file at `path` (the walk skips anything else, a FIFO is never
/// opened for reading by a blocking open), `Err` when one cannot be read
/// whole.
fn read_for_mentions(path: &Path) -> Result<Option<Vec<u8>>, ()> {
    use std::io::Read;
    match fs::metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) => return Err(()),
    }
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|_| ())?;
    let f = fs::File::from(fd);
    let m = f.metadata().map_err(|_| ())?;
    if !m.is_file() || m.len() > MENTION_SCAN_LIMIT {
        return Err(());
    }
    let mut text = Vec::with_capacity(m.len() as usize);
    f.take(MENTION_SCAN_LIMIT + 1)
        .read_to_end(&mut text)
        .map_err(|_| ())?;
    Ok(Some(text))
}

/// Largest env file scanned for a mention; a larger one (or one that
/// cannot be read) keeps every session variable in the key.
const MENTION_SCAN_LIMIT: u64 = 4 << 20;

/// The key of an `agentenv env` run: everything the reference's key covers
/// (`dotagents env --cache`'s) that agentenv reads — interpreter, cwd, scope
/// level, user, scope, project and system roots, the format as given (`auto` →
/// the detected canonical name), diff or full, every overlay, every env-file
/// candidate of both tiers with its signature (missing ones included), every
/// `lib` candidate and the files below it, the base env (with `--diff`,
/// less the [`SESSION_VARIABLES`] no env file mentions) — plus agentenv's
/// version, the timeout and an explicit agent.
pub fn key_for(p: &super::Prepared, base: &crate::core::Env, format: &str, diff: bool) -> String {
    key_with(p, base, format, diff, false)
}

/// [`key_for`], and for `--public-only` (whose output also depends on the
/// declarations) a key of its own that covers the signature of every
/// store's and overlay's `agentenv.toml`, so that an edited declaration
/// is never answered from an entry rendered before it.
pub fn key_with(p: &Prepared, base: &Env, format: &str, diff: bool, public: bool) -> String {
    key_parts(p, base, format, diff, public).key
}

fn builder(p: &Prepared, base: &Env, format: &str, diff: bool, public_only: bool) -> KeyBuilder {
    let s = &p.scope;
    let opt = |o: &Option<PathBuf>| o.as_ref().map(|p| p.as_os_str().as_bytes().to_vec());
    let mut k = KeyBuilder::new(p.timeout.as_secs_f64());
    k.labelled("the interpreter", opt(&p.interpreter).unwrap_or_default())
        .labelled("the current directory", s.cwd.as_os_str().as_bytes())
        .labelled("the scope (-g)", s.level)
        .labelled("the user store", s.user_root.as_os_str().as_bytes())
        .labelled("the scope's store", s.agents_root.as_os_str().as_bytes())
        .labelled("the project root", opt(&s.project_root).unwrap_or_default())
        .labelled("the system store", opt(&s.system_root).unwrap_or_default())
        .labelled("the format", format)
        .labelled(
            "the mode",
            match (diff, public_only) {
                (true, false) => "diff",
                (false, false) => "full",
                (true, true) => "diff public-only",
                (false, true) => "full public-only",
            },
        )
        .labelled("the agent", p.agent.as_deref().unwrap_or(""));
    // Every key covers the declarations: `--public-only`'s output
    // depends on them, and every output on their secret references.
    let dirs = s.stores.iter().map(|st| &st.path);
    for dir in dirs.chain(s.overlays.iter().map(|o| &o.path)) {
        let toml = s.cwd.join(dir).join(super::sensitive::FILE_NAME);
        k.file("declarations", &toml);
    }
    for o in &s.overlays {
        k.parts(
            format!("overlay {}", o.path.display()),
            &[b"overlay", o.name.as_bytes(), o.path.as_os_str().as_bytes()],
        );
    }
    for f in &p.env_files {
        let path = s.cwd.join(&f.path);
        k.file(&f.level, &path);
    }
    for l in &p.lib_candidates {
        k.lib(&s.cwd.join(l));
    }
    let skip = if diff {
        unread_session_variables(p, base)
    } else {
        Vec::new()
    };
    k.env(base, |name| skip.contains(&name));
    k
}

/// What a key covered, by label (`$NAME`, `file <path>`, …), each with a
/// digest of its item: kept beside the entries so that the next miss can
/// say what changed (names only, never a value).
#[derive(Debug, Clone)]
pub struct KeyParts {
    /// The key itself, as [`key_with`] gives it.
    pub key: String,
    /// Where the parts of the last run of this kind are kept.
    slot: String,
    parts: Vec<(String, blake3::Hash)>,
}

/// Where [`KeyParts`] are kept: `<user store>/.cache/env-keys`, beside the
/// entries (same rules: `0700`, `0600` files, nothing followed, cleaned up
/// after the TTL).
fn keys_dir(dir: &Path) -> PathBuf {
    dir.with_file_name("env-keys")
}

/// The [`KeyParts`] of the key [`key_with`] gives.
pub fn key_parts(
    p: &Prepared,
    base: &Env,
    format: &str,
    diff: bool,
    public_only: bool,
) -> KeyParts {
    let k = builder(p, base, format, diff, public_only);
    // One slot per directory, format and mode: a 64-hex name, so cleanup
    // removes it once it is older than the TTL.
    let mut slot = blake3::Hasher::new();
    for item in [
        b"agentenv key parts".as_slice(),
        env!("CARGO_PKG_VERSION").as_bytes(),
        p.scope.cwd.as_os_str().as_bytes(),
        format.as_bytes(),
        if diff { b"diff" } else { b"full" },
        if public_only { b"public" } else { b"all" },
    ] {
        slot.update(item);
        slot.update(b"\0");
    }
    KeyParts {
        key: k.finish(),
        slot: slot.finalize().to_hex().to_string(),
        parts: k.parts,
    }
}

impl KeyParts {
    /// Keep these parts as the last run's (`0600`, atomic; any error →
    /// not kept, silently).
    pub fn keep(&self, dir: &Path) {
        let mut text = String::new();
        for (label, hash) in &self.parts {
            // A label is one line: a newline in a path is escaped.
            text.push_str(&format!("{} {}\n", hash.to_hex(), label.escape_debug()));
        }
        let kept = keys_dir(dir);
        if usable_dir(&kept).is_ok() {
            let _ = try_store(&kept, &self.slot, text.as_bytes(), SystemTime::now());
        }
    }

    /// What changed since the parts [`KeyParts::keep`] kept for this kind of
    /// run: the labels of the items that differ, were added or went away,
    /// in key order; `None` when nothing was kept (or it expired).
    pub fn changed_since_kept(&self, dir: &Path) -> Option<Vec<String>> {
        let bytes = lookup(&keys_dir(dir), &self.slot)?;
        let text = String::from_utf8(bytes).ok()?;
        let mut before: std::collections::HashMap<String, String> = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(h, label)| (label.to_string(), h.to_string()))
            .collect();
        let mut changed = Vec::new();
        for (label, hash) in &self.parts {
            let label = label.escape_debug().to_string();
            match before.remove(&label) {
                Some(h) if h == hash.to_hex().as_str() => {}
                Some(_) => changed.push(label),
                None => changed.push(format!("{label} (new)")),
            }
        }
        let mut gone: Vec<String> = before.into_keys().map(|l| format!("{l} (gone)")).collect();
        gone.sort();
        changed.extend(gone);
        Some(changed)
    }
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
            b.labelled("t", "ab").labelled("t", "c");
        });
        let b2 = k(&|b| {
            b.labelled("t", "a").labelled("t", "bc");
        });
        assert_ne!(a, b2);
        assert_eq!(a.len(), 64);
        let mut t1 = KeyBuilder::new(30.0);
        let mut t2 = KeyBuilder::new(31.0);
        t1.labelled("t", "x");
        t2.labelled("t", "x");
        assert_ne!(t1.finish(), t2.finish());
    }

    #[test]
    fn mentions_is_by_word() {
        assert!(mentions(b"X=$OLDPWD\n", "OLDPWD"));
        assert!(mentions(b"os.environ['SHLVL']", "SHLVL"));
        assert!(mentions(b"echo \"${_}\"", "_"));
        assert!(!mentions(b"MY_OLDPWD=1 OLDPWD_X=2", "OLDPWD"));
        assert!(!mentions(b"A_B=1", "_"));
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
