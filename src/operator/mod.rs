//! The operator layer (`agentenv launch`): fill an environment from the
//! operator's `.env` / `.env.local` without overriding the host.
//!
//! An installed MCP server or plugin pack is started by a host (an agent,
//! an IDE) with an environment the host built. The operator may keep
//! settings and secrets for the pack in `<plugin root>/.env` and
//! `<plugin root>/.env.local`; this layer reads them at launch and sets
//! only the variables the host did not set. Precedence, lowest first:
//! manifest defaults < `.env` < `.env.local` < the host's environment.
//!
//! It is a port of agent-bundle's `launch-env` module
//! (docs/operator.md#launching-mcp-servers-and-plugins):
//!
//! - [`plugin_root`]: a non-blank `AGENT_BUNDLE_PLUGIN_ROOT` without an
//!   unexpanded `${…}` token, used untrimmed, else the fallback; both
//!   resolved lexically against the working directory (Node
//!   `path.resolve`).
//! - [`env_file_paths`]: the `AGENT_BUNDLE_ENV_FILE` list (`:`-separated,
//!   parts trimmed, empty parts dropped, made absolute; exactly `none`
//!   disables), else `<root>/.env` then `<root>/.env.local`.
//! - [`apply`]: the reserved set is fixed from the environment before any
//!   file is read — every present variable (an empty value counts) unless
//!   its value equals its manifest default byte for byte; on
//!   [`Platform::Win32`] names compare by Unicode uppercase. Each file is
//!   then applied with the engine's fill policy
//!   ([`Assembly::apply_fill`]), so later files override earlier ones and
//!   provenance is recorded.
//!
//! What it is not: it never fails (a missing file is `absent`, any other
//! read error `unreadable`), it never writes to stdout, and no value ever
//! appears in the [`Report`] or a log line. It does no process-global
//! mutation: the caller owns the environment map and decides what to do
//! with it (the CLI hands it to `exec`).
//!
//! # Example
//!
//! ```
//! use agentenv::core::{get, Env};
//! use agentenv::operator::{self, FileState, Options, Platform};
//!
//! let root = tempfile::tempdir()?;
//! std::fs::write(root.path().join(".env"), "TOKEN=from-file\nHOST_SET=file\n")?;
//! std::fs::write(root.path().join(".env.local"), "TOKEN=s3cret-local\n")?;
//!
//! let mut env = Env::new();
//! env.insert("HOST_SET".into(), "host".into());
//!
//! let opts = Options {
//!     plugin_root_fallback: root.path().to_path_buf(),
//!     platform: Platform::Linux,
//!     cwd: std::env::current_dir()?,
//!     ..Options::default()
//! };
//! let report = operator::apply(&mut env, &opts);
//!
//! assert_eq!(get(&env, "TOKEN").unwrap(), "s3cret-local"); // .env.local wins
//! assert_eq!(get(&env, "HOST_SET").unwrap(), "host"); // the host wins
//! assert_eq!(report.applied, ["TOKEN"]);
//! assert_eq!(report.files[0].state, FileState::Loaded);
//! assert_eq!(report.files[0].applied, Some(1));
//! // The report carries names and counts, never values.
//! assert!(!report.to_json_string().contains("s3cret"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod collate;
mod manifest;

use crate::compat::js::trim as trim_js;
use crate::compat::node::{join as path_join, resolve as path_resolve};
pub use collate::{compare_names, sort_names};
pub use manifest::{parse_manifest_env, ManifestError};

use crate::core::{Assembly, ChangeSet, Env, LayerInfo, LayerKind};
use indexmap::IndexMap;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The variable naming the file(s) to read instead of the plugin root's
/// `.env` / `.env.local` pair.
pub const ENV_FILE_VARIABLE: &str = "AGENT_BUNDLE_ENV_FILE";
/// The [`ENV_FILE_VARIABLE`] value that disables the layer.
pub const ENV_FILE_NONE: &str = "none";
/// The variable a host sets to the plugin's installed root.
pub const PLUGIN_ROOT_VARIABLE: &str = "AGENT_BUNDLE_PLUGIN_ROOT";
/// The conventional files, lowest priority first.
pub const ENV_FILE_NAMES: [&str; 2] = [".env", ".env.local"];
/// The host's path-list delimiter (this crate targets Unix).
pub const PATH_DELIMITER: u8 = b':';

/// The platform whose environment-name rules apply to reservation.
///
/// Only [`Platform::Win32`] differs: names compare case-insensitively
/// (Unicode uppercase), so a host `Path` reserves `PATH`. Path splitting
/// and normalisation always follow the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// `linux`.
    Linux,
    /// `darwin`.
    Darwin,
    /// `win32`: names compare by Unicode uppercase.
    Win32,
}

impl Default for Platform {
    /// [`Platform::host`], as the reference defaults to `process.platform`.
    fn default() -> Platform {
        Platform::host()
    }
}

impl Platform {
    /// The platform this process runs on.
    pub fn host() -> Platform {
        if cfg!(windows) {
            Platform::Win32
        } else if cfg!(target_os = "macos") {
            Platform::Darwin
        } else {
            Platform::Linux
        }
    }

    /// Node's name for it (`linux`, `darwin`, `win32`).
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Darwin => "darwin",
            Platform::Win32 => "win32",
        }
    }

    /// Parse Node's name (case-sensitive, as `process.platform` spells it).
    pub fn parse(s: &str) -> Option<Platform> {
        match s {
            "linux" => Some(Platform::Linux),
            "darwin" => Some(Platform::Darwin),
            "win32" => Some(Platform::Win32),
            _ => None,
        }
    }
}

/// How to run the layer.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The plugin root used when `AGENT_BUNDLE_PLUGIN_ROOT` is blank,
    /// absent or an unexpanded token; resolved against `cwd`. An empty
    /// path means `cwd` itself.
    pub plugin_root_fallback: PathBuf,
    /// The manifest defaults the host merged into the environment; a
    /// variable still holding its default may be overridden by a file.
    pub manifest_env: Option<IndexMap<String, String>>,
    /// Whose name comparison to use for reservation.
    pub platform: Platform,
    /// Read no file; hand the child `AGENT_BUNDLE_ENV_FILE=none` unless
    /// the environment already has that variable.
    pub no_env: bool,
    /// The working directory relative paths resolve against (absolute).
    /// Empty means the process's current directory, as Node's
    /// `process.cwd()`.
    pub cwd: PathBuf,
    /// When every file that is a pipe (a FIFO, `<(cmd)`) must be finished
    /// by, one deadline for the whole list; `None` means
    /// the pipe timeout (5 s) from the start of the layer. A pipe
    /// met after it is `unreadable` without being opened.
    pub pipe_deadline: Option<std::time::Instant>,
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    /// It does not exist (or a directory on its path does not, or it is a
    /// dangling symlink).
    Absent,
    /// It exists but could not be read (a directory, a plugin root that is
    /// a regular file, no permission, …); skipped.
    Unreadable,
    /// It was read and parsed.
    Loaded,
}

impl FileState {
    /// The name the report uses.
    pub fn as_str(self) -> &'static str {
        match self {
            FileState::Absent => "absent",
            FileState::Unreadable => "unreadable",
            FileState::Loaded => "loaded",
        }
    }
}

/// One file the layer considered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file, absolute.
    pub path: PathBuf,
    /// What happened when it was read.
    pub state: FileState,
    /// How many variables this file set; `Some` only when loaded.
    pub applied: Option<usize>,
    /// For an unreadable file, the OS error's description (never a value).
    pub error: Option<String>,
    /// For a loaded file, what the grammar found broken in it (ignored
    /// lines, unterminated quotes, trailing text after a quote, …; not
    /// duplicate keys). Names and lines only; not part of the JSON report.
    pub problems: Vec<crate::dotenv::Diagnostic>,
}

/// What the layer did: names and counts only, never a value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// Every variable the layer set, sorted by [`compare_names`].
    pub applied: Vec<String>,
    /// The files considered, in application order.
    pub files: Vec<FileReport>,
    /// The plugin root the default files were looked up under (not part of
    /// the JSON report).
    pub plugin_root: PathBuf,
    /// Where the plugin root came from (not part of the JSON report).
    pub root_source: RootSource,
    /// How many names the host environment reserved (not part of the JSON
    /// report).
    pub reserved: usize,
    /// `true` when [`Options::no_env`] disabled the layer (not part of the
    /// JSON report).
    pub disabled: bool,
}

/// Where [`plugin_root`] took the root from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RootSource {
    /// `AGENT_BUNDLE_PLUGIN_ROOT`.
    Env,
    /// The fallback: `AGENT_BUNDLE_PLUGIN_ROOT` is absent or blank.
    #[default]
    Fallback,
    /// The fallback: `AGENT_BUNDLE_PLUGIN_ROOT` holds an unexpanded `${…}`
    /// token.
    FallbackToken,
}

/// [`plugin_root`] and where it came from.
pub fn plugin_root_with_source(fallback: &Path, env: &Env, cwd: &Path) -> (PathBuf, RootSource) {
    if let Some(declared) = env.get(OsStr::new(PLUGIN_ROOT_VARIABLE)) {
        let b = declared.as_bytes();
        if !trim_js(b).is_empty() {
            if !has_token(b) {
                return (path_resolve(cwd, declared), RootSource::Env);
            }
            return (
                path_resolve(cwd, fallback.as_os_str()),
                RootSource::FallbackToken,
            );
        }
    }
    (
        path_resolve(cwd, fallback.as_os_str()),
        RootSource::Fallback,
    )
}

impl Report {
    /// The report as the reference shapes it:
    /// `{"applied": [...], "files": [{"applied"?, "path", "state"}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        let files: Vec<serde_json::Value> = self
            .files
            .iter()
            .map(|f| {
                let mut m = serde_json::Map::new();
                if let Some(n) = f.applied {
                    m.insert("applied".into(), n.into());
                }
                m.insert("path".into(), f.path.to_string_lossy().into_owned().into());
                m.insert("state".into(), f.state.as_str().into());
                serde_json::Value::Object(m)
            })
            .collect();
        serde_json::json!({ "applied": self.applied, "files": files })
    }

    /// [`Report::to_json`] as pretty-printed text with a final newline.
    pub fn to_json_string(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// `true` when `s` holds an unexpanded host token: `${`, then anything but
/// `}`, then `}` (`${X}`, `/opt/${X}/y`, `${}`).
pub(crate) fn has_token(s: &[u8]) -> bool {
    match s.windows(2).position(|w| w == b"${") {
        Some(i) => s[i + 2..].contains(&b'}'),
        None => false,
    }
}

/// The plugin root the files live under: `AGENT_BUNDLE_PLUGIN_ROOT` when it
/// is non-blank and token-free (resolved exactly as written, untrimmed),
/// else `fallback`; either resolved against `cwd` like Node's
/// `path.resolve`. Never warns.
pub fn plugin_root(fallback: &Path, env: &Env, cwd: &Path) -> PathBuf {
    plugin_root_with_source(fallback, env, cwd).0
}

/// The files a launch considers, in application order: the explicit
/// `AGENT_BUNDLE_ENV_FILE` list, nothing for exactly `none`, or
/// `<root>/.env` and `<root>/.env.local` (joined, not made absolute).
pub fn env_file_paths(root: &Path, env: &Env, cwd: &Path) -> Vec<PathBuf> {
    let explicit = env
        .get(OsStr::new(ENV_FILE_VARIABLE))
        .map(|v| trim_js(v.as_bytes()))
        .unwrap_or(b"");
    if explicit == ENV_FILE_NONE.as_bytes() {
        return Vec::new();
    }
    if !explicit.is_empty() {
        return explicit
            .split(|&b| b == PATH_DELIMITER)
            .map(trim_js)
            .filter(|p| !p.is_empty())
            .map(|p| path_resolve(cwd, OsStr::from_bytes(p)))
            .collect();
    }
    ENV_FILE_NAMES.iter().map(|n| path_join(root, n)).collect()
}

/// The name reservation compares: on win32 the Unicode uppercase (a name
/// that is not UTF-8 compares as its bytes), elsewhere the name itself.
pub(crate) fn comparison_key(name: &OsStr, platform: Platform) -> Vec<u8> {
    match (platform, name.to_str()) {
        (Platform::Win32, Some(s)) => s.to_uppercase().into_bytes(),
        _ => name.as_bytes().to_vec(),
    }
}

/// The reserved set (comparison keys): every name present in `env` (an
/// empty value counts) whose value is not byte-for-byte its manifest
/// default. Computed before any file is read.
pub fn reserved_set(
    env: &Env,
    manifest_env: Option<&IndexMap<String, String>>,
    platform: Platform,
) -> BTreeSet<Vec<u8>> {
    let mut defaults: BTreeMap<Vec<u8>, &str> = BTreeMap::new();
    if let Some(m) = manifest_env {
        for (k, v) in m {
            // On win32 two spellings collapse; the later entry wins.
            defaults.insert(comparison_key(OsStr::new(k), platform), v.as_str());
        }
    }
    let mut reserved = BTreeSet::new();
    for (k, v) in env {
        let ck = comparison_key(k, platform);
        let is_default = defaults
            .get(&ck)
            .is_some_and(|d| d.as_bytes() == v.as_bytes());
        if !is_default {
            reserved.insert(ck);
        }
    }
    reserved
}

/// The largest file the layer reads (a larger one is `unreadable`): far
/// beyond any real `.env`, and beyond what `execve` can hand a child, but
/// it keeps `AGENT_BUNDLE_ENV_FILE=/dev/zero` from exhausting memory.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Read one file: `Ok(bytes)`, or the state and error description.
fn read_file(
    p: &Path,
    deadline: std::time::Instant,
) -> Result<Vec<u8>, (FileState, Option<String>)> {
    // Regular files or bounded pipes: a FIFO would block the launch
    // forever, a device never ends.
    crate::fsutil::read_input_until(p, MAX_FILE_BYTES, deadline).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            (FileState::Absent, None)
        } else {
            (FileState::Unreadable, Some(crate::fsutil::io_kind(&e)))
        }
    })
}

/// The change set one file contributes: the grammar's entries, a value
/// cut at its first NUL (an environment cannot carry it); and what was
/// broken in the file.
fn file_changes(bytes: &[u8]) -> (ChangeSet, Vec<crate::dotenv::Diagnostic>) {
    let mut parsed = crate::dotenv::parse_bytes(bytes);
    let mut cs = ChangeSet::new();
    for e in &parsed.entries {
        let v = match e.value.find('\0') {
            Some(i) => &e.value[..i],
            None => e.value.as_str(),
        };
        cs.set_at(e.key.as_str(), v, e.line);
    }
    parsed.diagnostics.retain(|d| d.kind.is_breakage());
    (cs, parsed.diagnostics)
}

/// Why a fill layer left a key alone (`explain`, `launch -vv`): the host
/// environment already has it.
pub const RESERVED_REASON: &str = "reserved by the host environment";

/// Run the layer on an [`Assembly`]: one fill layer per file (kind
/// [`LayerKind::DotenvFile`], with its path), reserved set taken from the
/// assembly's current environment. With [`Options::no_env`], one literal
/// layer that fills `AGENT_BUNDLE_ENV_FILE=none`.
pub fn apply_to_assembly(asm: &mut Assembly, opts: &Options) -> Report {
    let mut report = Report::default();
    let cwd = if opts.cwd.as_os_str().is_empty() {
        std::env::current_dir().unwrap_or_default()
    } else {
        opts.cwd.clone()
    };
    let env = asm.current();
    (report.plugin_root, report.root_source) =
        plugin_root_with_source(&opts.plugin_root_fallback, env, &cwd);
    if opts.no_env {
        report.disabled = true;
        let layer = asm.add_layer(LayerInfo::new(LayerKind::Literal).with_level("--no-env"));
        let mut cs = ChangeSet::new();
        cs.set(ENV_FILE_VARIABLE, ENV_FILE_NONE);
        let present = asm.current().contains_key(OsStr::new(ENV_FILE_VARIABLE));
        asm.apply_fill(layer, &cs, RESERVED_REASON, |_| present);
        return report;
    }
    let paths = env_file_paths(&report.plugin_root, env, &cwd);
    let reserved = reserved_set(env, opts.manifest_env.as_ref(), opts.platform);
    report.reserved = reserved.len();
    let platform = opts.platform;
    let mut applied: BTreeSet<OsString> = BTreeSet::new();
    let deadline = opts
        .pipe_deadline
        .unwrap_or_else(|| std::time::Instant::now() + crate::fsutil::PIPE_TIMEOUT);
    for p in paths {
        let bytes = match read_file(&p, deadline) {
            Ok(b) => b,
            Err((state, error)) => {
                if state == FileState::Unreadable {
                    // Recorded as a failed layer, so provenance views show it.
                    let layer = asm.add_layer(LayerInfo::new(LayerKind::DotenvFile).with_path(&p));
                    asm.fail(
                        layer,
                        format!("unreadable: {}", error.as_deref().unwrap_or("error")),
                    );
                }
                report.files.push(FileReport {
                    path: p,
                    state,
                    applied: None,
                    error,
                    problems: Vec::new(),
                });
                continue;
            }
        };
        let (cs, problems) = file_changes(&bytes);
        let layer = asm.add_layer(LayerInfo::new(LayerKind::DotenvFile).with_path(&p));
        let set = asm.apply_fill(layer, &cs, RESERVED_REASON, |k| {
            reserved.contains(&comparison_key(k, platform))
        });
        report.files.push(FileReport {
            path: p,
            state: FileState::Loaded,
            applied: Some(set.len()),
            error: None,
            problems,
        });
        applied.extend(set);
    }
    report.applied = applied
        .into_iter()
        .map(|k| k.to_string_lossy().into_owned())
        .collect();
    sort_names(&mut report.applied);
    // What the files' readers skipped, as warnings on the assembly (worded
    // as `launch` prints them; names, files and lines only).
    for f in &report.files {
        if f.state == FileState::Unreadable {
            asm.warn(format!(
                "launch: cannot read {} ({}); skipped",
                f.path.display(),
                f.error.as_deref().unwrap_or("error")
            ));
        }
        // A broken .env still loads what the grammar reads (the
        // reference's semantics); say what it did not read.
        for d in &f.problems {
            asm.warn(format!(
                "launch: {}:{}: {}",
                f.path.display(),
                d.line,
                d.message
            ));
        }
    }
    report
}

/// Apply the operator layer to `env` in place and report what happened.
/// See the [module docs](self) for the rules and an example.
pub fn apply(env: &mut Env, opts: &Options) -> Report {
    let mut asm = Assembly::new(std::mem::take(env));
    let report = apply_to_assembly(&mut asm, opts);
    *env = asm.current().clone();
    report
}

#[cfg(test)]
mod tests;
