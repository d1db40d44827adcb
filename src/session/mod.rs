//! The session environment (`agentenv env`, `exec`, `explain`): the
//! reference `dotagents env` 0.8.2 rebuilt as layers over [`crate::core`].
//!
//! Contract A (`scope.rs`) decides which stores and overlays are walked and
//! in which order; contract B ([`assemble`]) turns the walk into layers —
//! identity, roots, interpreter pin, overlay roots, PATH, libs, every
//! `env.py` and plain file of both tiers, the proxy model — each applied to
//! one [`Assembly`] with its [`LayerKind`], so `explain` can show where every
//! variable came from and `--cache` can key on the same scope.
//!
//! Inside the crate every session run enters by one door, `plan.rs`
//! (`plan(&Request, &Env) -> Plan`: the project root, the trust gate
//! (`gate.rs`, `trust.rs`), [`prepare`] and the cache probe (`cache.rs`),
//! then `cached()` or `assemble()`, and `store()`); `status.rs` is what
//! `agentenv status` shows of a plan.
//!
//! Not for: rendering ([`crate::render`]), `--into` (`into.rs`).

pub(crate) mod cache;
pub(crate) mod edit;
pub(crate) mod gate;
pub(crate) mod identity;
pub(crate) mod import;
pub(crate) mod into;
pub(crate) mod native;
pub(crate) mod only;
pub(crate) mod paths;
pub(crate) mod plan;
pub(crate) mod pyjson;
pub(crate) mod report;
pub(crate) mod scope;
pub(crate) mod script;
pub(crate) mod sensitive;
pub(crate) mod shell;
pub(crate) mod status;
pub(crate) mod steps;
pub(crate) mod storefile;
pub(crate) mod trace;
pub(crate) mod trust;

use crate::core::{Assembly, ChangeSet, Env, LayerInfo, LayerKind, Note};
pub use crate::core::{DecidedBy, Sensitivity};
use crate::session::trust::Pinned;
pub(crate) use plan::{plan, CacheMode, Plan, Request, RootRule};
// The rest of the face the CLI and the shell hook use (the session's inner
// modules stay its own).
pub(crate) use gate::{allow, before_edit, Edit};
/// The declarations file of a store (`agentenv.toml`).
pub(crate) const DECLARATIONS: &str = sensitive::FILE_NAME;
pub(crate) use into::write_into_file;
pub(crate) use native::bash_special;
use scope::{Scope, WalkEntry};
pub(crate) use sensitive::with_reference;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a session could not be planned. Its text names no value (only
/// what could not be read, and why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The current directory cannot be read (the I/O error's kind).
    CurrentDir(String),
    /// `~` cannot be expanded: no `$HOME` and no password entry.
    NoHome,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::CurrentDir(kind) => write!(f, "cannot read the current directory: {kind}"),
            Error::NoHome => f.write_str("could not determine home directory"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The current directory could not be read.
    pub(crate) fn current_dir(e: &std::io::Error) -> Error {
        Error::CurrentDir(crate::fsutil::io_kind(e))
    }
}

/// What the caller chose.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `-g`: walk no project.
    pub global: bool,
    /// `--agents-dir`: the user store.
    pub agents_dir: Option<PathBuf>,
    /// `--timeout`; `None` → `$AGENTS_ENV_TIMEOUT` → 30 s.
    pub timeout: Option<Duration>,
    /// `exec --agent`: an agent whose identity is stamped unconditionally.
    pub agent: Option<String>,
    /// The working directory (default: the process's).
    pub cwd: Option<PathBuf>,
    /// An explicit project root (the shell hook's walk-up rule); wins over
    /// `$AGENTS_PROJECT_ROOT` and `$CLAUDE_PROJECT_DIR`.
    pub project_root: Option<PathBuf>,
    /// The project store, when not `<project root>/.agents` (the trust
    /// gate loads an allowed store by its real path).
    pub project_store: Option<PathBuf>,
    /// What the trust digest read of the project store: its env files run
    /// from these bytes, and its `bin`/`lib` dirs count only if the digest
    /// saw them (set by the trust gate).
    pub pinned: Option<std::sync::Arc<crate::session::trust::Snapshot>>,
    /// Why the user store is not loaded (set by the trust gate).
    pub user_store_refused: Option<String>,
}

/// The two tiers of env files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    Pre,
    Main,
}

/// One env-file candidate of the walk (it may not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvFile {
    pub tier: Tier,
    pub level: String,
    pub path: PathBuf,
    /// `true` for `*.py` (executed), `false` for plain files (sourced).
    pub script: bool,
}

/// Everything known before any layer runs: the scope and the candidates.
/// `--cache` keys on this.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub(crate) scope: Scope,
    /// Both tiers, in order, missing ones included.
    pub(crate) env_files: Vec<EnvFile>,
    /// Every `lib` candidate, missing ones included.
    pub(crate) lib_candidates: Vec<PathBuf>,
    /// Every `bin` entry (all go on PATH).
    pub(crate) bin_paths: Vec<PathBuf>,
    /// The default interpreter for `*.py` layers.
    pub(crate) interpreter: Option<PathBuf>,
    /// Per-child timeout.
    pub(crate) timeout: Duration,
    pub(crate) agent: Option<String>,
    /// What resolving the scope and the timeout had to say (warnings), in
    /// order. [`Prepared::assemble`] moves them to the front of the
    /// assembly's notes; a caller that shows them earlier takes them out
    /// first.
    pub(crate) notes: Vec<Note>,
    /// The trust digest's snapshot of the project store (see
    /// [`Options::pinned`]).
    pub(crate) pinned: Option<std::sync::Arc<crate::session::trust::Snapshot>>,
}

/// An assembled session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The scope and candidates it was assembled from.
    pub prepared: Prepared,
    /// The layers, their provenance, the result and the notes.
    pub assembly: Assembly,
    /// Per variable the result sets: public or sensitive, and why
    /// (`sensitive.rs`).
    sensitivity: BTreeMap<OsString, Sensitivity>,
    /// The variables a store's file set to the value the caller already
    /// had (so the result does not list them), not declared public there:
    /// the caller holds a store's secret ([`Session::values_to_mask`]).
    /// With each, whether that store declares it `sensitive = true`.
    held: Vec<(OsString, bool)>,
    /// The secret references of the load and what became of each.
    references: Vec<RefRecord>,
}

/// One secret reference of a load (docs/team-secrets.md#team-secrets): no value.
#[derive(Debug, Clone)]
pub(crate) struct RefRecord {
    pub name: String,
    /// The reference as written.
    pub text: String,
    /// The directory whose `agentenv.toml` declares it: a store or one
    /// of its overlays.
    pub store: PathBuf,
    pub line: u32,
    /// Resolved (from where, when), or why not.
    pub outcome: Result<(crate::refs::Source, std::time::SystemTime), String>,
    /// The value daemon's key of the reference (`None`: refused before
    /// any lookup).
    pub key: Option<[u8; 32]>,
}

impl RefRecord {
    fn refused(r: &sensitive::Reference, store: &Path, why: &str) -> RefRecord {
        RefRecord {
            name: r.name.clone(),
            text: r.text.clone(),
            store: store.to_path_buf(),
            line: r.line,
            outcome: Err(why.to_string()),
            key: None,
        }
    }
}

impl Session {
    /// The load's secret references and what became of each.
    pub(crate) fn references(&self) -> &[RefRecord] {
        &self.references
    }

    /// The names of the references that resolved (`true`) or did not.
    pub(crate) fn reference_names(&self, resolved: bool) -> Vec<&str> {
        let refs = self.references.iter();
        refs.filter(|r| r.outcome.is_ok() == resolved)
            .map(|r| r.name.as_str())
            .collect()
    }

    /// The full result (set + removed) of the assembly.
    pub fn changes(&self) -> &ChangeSet {
        self.assembly.result()
    }

    /// Whether the final value of `name` is public, who decided, and its
    /// description (docs/session.md#sensitive-and-public-values). A variable the
    /// layers set is sensitive unless agentenv computes it or the
    /// `agentenv.toml` of the store or overlay that set it declares it public.
    /// A variable no layer set is public only when agentenv computes it
    /// (decided by name: `PATH`, the roots, a proxy variable without a user or
    /// password, …); any other (the base environment's, or absent) is not
    /// ([`DecidedBy::Base`]).
    ///
    /// ```
    /// use agentenv::core::Env;
    /// use agentenv::session::{self, DecidedBy, Options};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let w = dir.path();
    /// let store = w.join("home/.agents");
    /// std::fs::create_dir_all(&store).unwrap();
    /// std::fs::create_dir_all(w.join("proj")).unwrap();
    /// std::fs::write(store.join("env"), "LOG_LEVEL=debug\nGH_TOKEN=ghp_example\n").unwrap();
    /// std::fs::write(
    ///     store.join("agentenv.toml"),
    ///     "[vars]\nLOG_LEVEL = { public = true, description = \"log level\" }\n",
    /// )
    /// .unwrap();
    ///
    /// let mut base = Env::new();
    /// base.insert("HOME".into(), w.join("home").into());
    /// base.insert("PATH".into(), "/usr/bin:/bin".into());
    /// base.insert("AGENTS_SYSTEM_ROOT".into(), w.join("no-system").into());
    /// let opts = Options { cwd: Some(w.join("proj")), ..Default::default() };
    /// let s = session::assemble(&opts, base).unwrap();
    ///
    /// assert!(s.is_public("LOG_LEVEL") && s.is_public("PATH"));
    /// let token = s.sensitivity("GH_TOKEN");
    /// assert!(!token.public);
    /// assert_eq!(token.decided_by, DecidedBy::Store(store.clone()));
    /// assert_eq!(s.sensitivity("LOG_LEVEL").description.as_deref(), Some("log level"));
    /// // What a masker masks:
    /// assert_eq!(s.sensitive_values(), [("GH_TOKEN".to_string(), b"ghp_example".to_vec())]);
    /// ```
    pub fn sensitivity(&self, name: impl AsRef<OsStr>) -> Sensitivity {
        let name = name.as_ref();
        if let Some(s) = self.sensitivity.get(name) {
            return s.clone();
        }
        self.assembly
            .base()
            .get(name)
            .and_then(|v| sensitive::by_name(name, v))
            .unwrap_or(Sensitivity {
                public: false,
                description: None,
                declared_sensitive: false,
                decided_by: DecidedBy::Base,
            })
    }

    /// `self.sensitivity(name).public`: may the final value of `name` be
    /// shown (`env --public-only`)? A variable of the base environment is
    /// public only when agentenv computes it (`PATH`, a proxy variable
    /// without a user or password, …).
    pub fn is_public(&self, name: impl AsRef<OsStr>) -> bool {
        let name = name.as_ref();
        match self.sensitivity.get(name) {
            Some(s) => s.public,
            None => self.sensitivity(name).public,
        }
    }

    /// The session as a view to render: the changes only (`diff`), or
    /// the whole environment (the reference's `DOTAGENTS_` bookkeeping
    /// left out).
    pub(crate) fn view(&self, diff: bool) -> crate::render::View {
        let base = self.assembly.base();
        let changes = self.assembly.result();
        if diff {
            crate::render::View::diff(base, changes)
        } else {
            crate::render::View::full(base, changes, Some("DOTAGENTS_"))
        }
    }

    /// `--public-only`: drop every assignment whose variable is not public
    /// (a sensitive value a layer set, or a base-environment value no layer
    /// set); removals carry no value and stay. Returns the names left out.
    pub(crate) fn keep_public(&self, view: &mut crate::render::View) -> Vec<String> {
        let mut left_out = Vec::new();
        view.assignments.retain(|(k, _)| {
            let public = self.is_public(k);
            if !public {
                left_out.push(k.to_string_lossy().into_owned());
            }
            public
        });
        left_out
    }

    /// Masked or not ([`crate::core::masking`]) of the final value of
    /// `name`, were it sensitive: masked, or why not (`explain` says it).
    /// Only sensitive variables are masked: ask [`Session::is_public`]
    /// first.
    pub fn masking(&self, name: impl AsRef<OsStr>) -> crate::core::Masking {
        let name = name.as_ref();
        let value = self
            .assembly
            .final_value(name)
            .map(OsStr::as_bytes)
            .unwrap_or_default();
        crate::core::masking(value, self.sensitivity(name).declared_sensitive)
    }

    /// Every sensitive variable the result sets, masked or not (a value
    /// too short to mask, a number, a boolean word stays sensitive): what
    /// `exec --only` keeps from the child unless it is named. Same order
    /// and rule for the base environment as [`Session::sensitive_values`].
    pub fn sensitive_unmasked_too(&self) -> Vec<(String, Vec<u8>)> {
        self.sensitive_where(|_| true)
    }

    /// The values to mask: `(name, final value bytes)` of every variable
    /// the session's result sets that is not public and that is masked
    /// ([`Session::masking`]: from 8 bytes, never a number or a boolean
    /// word, from 4 bytes when declared `sensitive = true`), in byte order
    /// of the names (a name that is not UTF-8 is given lossily). What a
    /// masker masks and `audit` looks for. Variables no layer set (the
    /// base environment's) are not listed: they are the caller's own. That
    /// includes a variable a plain file set to the value the caller already
    /// had: it leaves no trace (the reference's snapshot rule), so in a
    /// shell that already exported the stores' values, those values are
    /// the caller's.
    pub fn sensitive_values(&self) -> Vec<(String, Vec<u8>)> {
        self.sensitive_where(crate::core::Masking::is_masked)
    }

    /// The sensitive values the result assigns whose masking `keep`
    /// accepts, in byte order of the names.
    fn sensitive_where(
        &self,
        keep: impl Fn(crate::core::Masking) -> bool,
    ) -> Vec<(String, Vec<u8>)> {
        self.assembly
            .result()
            .assigned()
            .iter()
            .filter(|(k, _)| !self.is_public(k) && keep(self.masking(k)))
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.as_bytes().to_vec()))
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect()
    }

    /// The sensitive values that are not masked (docs/masking.md#masked-or-not:
    /// short, a number, a boolean word, only sensitive by default), as
    /// [`Session::sensitive_values`] lists the masked ones: what the agent
    /// hook hands a command besides the values to mask (they stay out of
    /// `CLAUDE_ENV_FILE`, yet the command needs them).
    pub fn unmasked_values(&self) -> Vec<(String, Vec<u8>)> {
        self.sensitive_where(|m| !m.is_masked())
    }

    /// The values to mask — what `redact`, `exec --redact`, the agent
    /// hook's entry and `audit` all use: the values this session assigned
    /// and does not call public ([`Session::sensitive_values`]), plus the
    /// values the caller already holds that a store's file set to that
    /// same value (not declared public there; masked by the same rule,
    /// [`crate::core::masking`]). In a shell that loaded the
    /// stores already (`eval "$(agentenv env)"`, the hook), those are still
    /// the stores' secrets, though the result does not list them (mise's
    /// `redactable_env(caller_env)`). A file bash had to source leaves no
    /// trace of such a value; an assignment-only file (the common case) and
    /// `env.py` do. In byte order of the names.
    pub fn values_to_mask(&self) -> Vec<(String, Vec<u8>)> {
        let mut out: BTreeMap<String, Vec<u8>> = self.sensitive_values().into_iter().collect();
        for (k, declared_sensitive) in &self.held {
            let Some(v) = self.assembly.final_value(k).map(OsStr::as_bytes) else {
                continue;
            };
            if crate::core::masking(v, *declared_sensitive).is_masked() {
                out.entry(k.to_string_lossy().into_owned())
                    .or_insert_with(|| v.to_vec());
            }
        }
        out.into_iter().collect()
    }

    /// The values the caller already holds that a store's file set to that
    /// same value (not declared public there), masked or not: what
    /// [`Session::values_to_mask`] adds to the session's own, before the
    /// masking rule. In byte order of the names.
    pub fn held_values(&self) -> Vec<(String, Vec<u8>)> {
        let held = self.held.iter().filter_map(|(k, _)| {
            let v = self.assembly.final_value(k)?;
            Some((k.to_string_lossy().into_owned(), v.as_bytes().to_vec()))
        });
        held.collect::<BTreeMap<_, _>>().into_iter().collect()
    }
}

/// The default interpreter: a pinned `AGENTS_PYTHON` naming an existing
/// file, else `python3`, then `python`, on the real `PATH`.
pub(crate) fn default_interpreter(base: &Env, cwd: &Path) -> Option<PathBuf> {
    if let Some(p) = crate::core::get(base, "AGENTS_PYTHON").filter(|v| !v.is_empty()) {
        if paths::at(Path::new(p), cwd).is_file() {
            return Some(PathBuf::from(p));
        }
    }
    let path = crate::core::get(base, "PATH");
    paths::which("python3", path, cwd).or_else(|| paths::which("python", path, cwd))
}

fn entries(w: Vec<WalkEntry>) -> Vec<PathBuf> {
    w.into_iter().map(|e| e.path).collect()
}

/// Resolve the scope and everything the walk names; runs nothing.
pub fn prepare(opts: &Options, base: &Env) -> Result<Prepared, Error> {
    let cwd = match &opts.cwd {
        Some(c) => c.clone(),
        None => std::env::current_dir().map_err(|e| Error::current_dir(&e))?,
    };
    let mut warnings = Vec::new();
    let scope = Scope::resolve(opts, base, &cwd, &mut warnings)?;
    let pinned = opts.pinned.clone();
    let mut env_files = Vec::new();
    for (tier, specs) in [(Tier::Pre, scope::PRE_TIER), (Tier::Main, scope::MAIN_TIER)] {
        for e in scope.walk(specs, true) {
            let script = e.path.as_os_str().as_bytes().ends_with(b".py");
            env_files.push(EnvFile {
                tier,
                level: e.level,
                path: e.path,
                script,
            });
        }
    }
    let lib_candidates = entries(scope.walk(scope::LIB, true));
    let mut bin_paths = entries(scope.walk(scope::BIN, true));
    if let Some(snap) = &pinned {
        // A gated store's missing bin dirs are not listed: one made after
        // the digest would put unallowed programs on PATH.
        bin_paths.retain(|b| snap.has_dir(b) != Some(false));
    }
    let interpreter = default_interpreter(base, &cwd);
    let timeout = opts
        .timeout
        .unwrap_or_else(|| crate::process::timeout_from_env(base, &mut warnings));
    Ok(Prepared {
        interpreter,
        timeout,
        agent: opts.agent.clone(),
        scope,
        env_files,
        lib_candidates,
        bin_paths,
        notes: warnings.into_iter().map(Note::warning).collect(),
        pinned,
    })
}

/// Resolve and assemble. Nothing is printed: every warning (and the `-v`
/// line of each env file) is a [`Note`] on the session's assembly, in
/// order ([`Assembly::notes`]).
pub fn assemble(opts: &Options, base: Env) -> Result<Session, Error> {
    let prepared = prepare(opts, &base)?;
    Ok(prepared.assemble(base))
}

/// The user store for `base`: `$AGENTS_HOME`, else `~/.agents`.
pub(crate) fn user_store(base: &Env) -> Result<PathBuf, Error> {
    scope::user_store(None, base).map_err(|_| Error::NoHome)
}

/// Every directory the stores of `base` may be read from, by the rules
/// `env` resolves them with: the user store (`$AGENTS_HOME`, `~`
/// expanded, else `~/.agents`; its `.cache` is inside), `~/.agents` as
/// well when `$AGENTS_HOME` moved the user store, and the system store's
/// candidate (`$AGENTS_SYSTEM_ROOT`, `~` expanded, else `/etc/agents`)
/// whether or not the trust rule uses it. A project's store is any
/// `.agents` directory. What the agent hook's file-tool guard denies.
pub(crate) fn store_roots(base: &Env) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = user_store(base).into_iter().collect();
    let home = crate::core::get(base, "HOME");
    if let Ok(h) = paths::expanduser(std::ffi::OsStr::new("~"), home) {
        roots.push(h.join(".agents"));
    }
    roots.extend(
        scope::SystemStore::decide(base)
            .path()
            .map(Path::to_path_buf),
    );
    roots.dedup();
    roots
}

/// The agent `exec --agent NAME` stamps (its registry name), or every
/// known name.
pub(crate) fn agent_named(name: &str) -> Result<String, Vec<&'static str>> {
    match identity::lookup(name) {
        Some(agent) => Ok(agent.name.to_string()),
        None => Err(identity::REGISTRY.iter().map(|a| a.name).collect()),
    }
}

/// A cache entry [`Plan::cache_entry`] named, while it is fresh (the
/// agent hooks' per-command helper reads it).
pub(crate) fn read_entry(entry: &Path) -> Option<Vec<u8>> {
    let dir = entry.parent()?;
    let key = entry.file_name()?.to_str()?;
    cache::lookup(dir, key)
}

/// Make `dir` with the cache's own rules (owner-only, never through
/// another user's link): where the agent hooks keep their prologue.
pub(crate) fn make_cache_dir(dir: &Path) -> std::io::Result<()> {
    cache::create_dir(dir)
}

/// Variables a child needs to start, backfilled from the base env.
pub(crate) const BOOTSTRAP: &[&str] = &[
    "SYSTEMROOT",
    "SystemRoot",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "TEMP",
    "TMP",
    "TMPDIR",
    "LD_LIBRARY_PATH",
];

fn spawn_env(current: &Env, base: &Env) -> Env {
    let mut out = current.clone();
    for k in BOOTSTRAP {
        let k = OsStr::new(k);
        if !out.contains_key(k) {
            if let Some(v) = base.get(k) {
                out.insert(k.to_os_string(), v.clone());
            }
        }
    }
    out
}

/// The walk's existing `lib` directories, highest precedence first, each
/// once (in a gated store: those the digest saw).
fn existing_libs(
    candidates: &[PathBuf],
    cwd: &Path,
    pinned: Option<&crate::session::trust::Snapshot>,
) -> Vec<Vec<u8>> {
    let mut libs: Vec<Vec<u8>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in candidates.iter().rev() {
        let bytes = p.as_os_str().as_bytes();
        let exists = match pinned.and_then(|s| s.has_dir(p)) {
            Some(in_digest) => in_digest && paths::at(p, cwd).is_dir(),
            None => paths::at(p, cwd).is_dir(),
        };
        if exists && !seen.contains(bytes) {
            seen.insert(bytes);
            libs.push(bytes.to_vec());
        }
    }
    libs
}

/// Add a computed layer and apply what `step` makes of the accumulated
/// environment; returns the layer's index.
fn computed(a: &mut Assembly, info: LayerInfo, step: impl FnOnce(&Env) -> ChangeSet) -> usize {
    let l = a.add_layer(info);
    let cs = step(a.current());
    a.apply(l, &cs);
    l
}

/// What one assembly run carries besides the [`Assembly`]: the bash found
/// for plain files (looked up once, at the first one) and the native
/// evaluator's PATH memo (dropped whenever a child ran).
struct Run {
    bash: Option<Option<PathBuf>>,
    memo: native::PathMemo,
    /// What a plain file set to the value it already had, with its layer.
    held: Vec<(OsString, usize)>,
}

impl Prepared {
    /// Contract B over `base` (dotagents' `get_environment`): the layers, in
    /// order. The notes of [`prepare`] come first on the assembly, then each
    /// layer's.
    pub fn assemble(mut self, base: Env) -> Session {
        let mut a = Assembly::new(base.clone());
        for n in std::mem::take(&mut self.notes) {
            a.note(n);
        }
        let s = &self.scope;
        let cwd = &s.cwd;
        let info = LayerInfo::new;

        computed(&mut a, info(LayerKind::Identity), |env| {
            identity::stamp(env, self.agent.as_deref())
        });
        // No project walked (-g): the reference's default root may still
        // fill AGENTS_PROJECT_ROOT.
        let fallback_root;
        let project = match &s.project_root {
            Some(walked) => steps::ProjectRoot::Walked(walked),
            None => {
                let d = scope::project_root_default(&base, cwd).unwrap_or_else(|_| cwd.clone());
                fallback_root = paths::abspath(&d, cwd);
                steps::ProjectRoot::Fallback(&fallback_root)
            }
        };
        computed(&mut a, info(LayerKind::Roots), |env| {
            steps::roots(env, &s.user_root, project, |x, y| {
                paths::realpath(x, cwd) == paths::realpath(y, cwd)
            })
        });
        computed(&mut a, info(LayerKind::Interpreter), |env| {
            steps::interpreter(env, self.interpreter.as_deref())
        });
        for o in &s.overlays {
            let layer = info(LayerKind::OverlayRoot)
                .with_path(&o.path)
                .with_level(&o.name);
            let store_copy = s.user_root.join("overlays").join(&o.name);
            computed(&mut a, layer, |env| {
                steps::overlay_root(env, &o.root_var(), &o.path, &store_copy)
            });
        }
        let bins: Vec<&Path> = self.bin_paths.iter().map(PathBuf::as_path).collect();
        let l = computed(&mut a, info(LayerKind::BinPaths), |env| {
            steps::bin_paths(env, &bins)
        });
        // The same layer's second touch of PATH (`explain` shows both).
        let cs = steps::without_launcher_dirs(a.current());
        a.apply(l, &cs);
        let libs = existing_libs(&self.lib_candidates, cwd, self.pinned.as_deref());
        computed(&mut a, info(LayerKind::LibPaths), |env| {
            steps::lib_paths(env, &libs)
        });

        // The two tiers. Resolved once, before any file runs (as the
        // reference does). Only regular files (symlinks followed); a FIFO
        // is never opened.
        let mut run = Run {
            bash: None,
            memo: native::PathMemo::new(),
            held: Vec::new(),
        };
        // A gated store's files: those the digest read, from its bytes.
        let present: Vec<&EnvFile> = self
            .env_files
            .iter()
            .filter(|f| match self.pinned_file(f) {
                Pinned::Elsewhere => {
                    std::fs::metadata(paths::at(&f.path, cwd)).is_ok_and(|m| m.is_file())
                }
                Pinned::Absent => false,
                Pinned::TooLarge | Pinned::Bytes(_) => true,
            })
            .collect();
        // The declarations (`agentenv.toml`) of every store and overlay,
        // read once: the references' layers and the sensitivity use them.
        let mut decl_notes = Vec::new();
        let decls = self.declarations(&mut decl_notes);
        // A store's references resolve after its last main-tier file.
        let ends: Vec<(usize, &scope::Store)> = s
            .stores
            .iter()
            .filter_map(|st| {
                let last = self.env_files.iter().rposition(|f| {
                    f.tier == Tier::Main && f.path.parent() == Some(st.path.as_path())
                })?;
                Some((last, st))
            })
            .collect();
        let mut references = Vec::new();
        for (i, f) in self.env_files.iter().enumerate() {
            if present.iter().any(|p| std::ptr::eq(*p, f)) {
                self.env_file(&mut a, &mut run, f, &base);
            }
            for (_, st) in ends.iter().filter(|(last, _)| *last == i) {
                self.resolve_references(&mut a, st, &decls, &base, &mut references);
            }
        }

        computed(&mut a, info(LayerKind::Proxy), identity::proxy);

        for n in decl_notes {
            a.note(n);
        }
        let (sensitivity, held) = self.classify(&mut a, &decls, &run.held);
        Session {
            prepared: self,
            assembly: a,
            sensitivity,
            references,
            held,
        }
    }

    /// The `agentenv.toml` of every store and overlay in scope (a gated
    /// store's from the bytes its digest read).
    fn declarations(&self, notes: &mut Vec<Note>) -> BTreeMap<PathBuf, sensitive::Declarations> {
        let s = &self.scope;
        let mut decls = BTreeMap::new();
        let dirs = s.stores.iter().map(|st| &st.path);
        for dir in dirs.chain(s.overlays.iter().map(|o| &o.path)) {
            let file = dir.join(sensitive::FILE_NAME);
            let pinned = match &self.pinned {
                Some(snap) => snap.file(&paths::at(&file, &s.cwd)),
                None => Pinned::Elsewhere,
            };
            let d = match pinned {
                Pinned::Bytes(b) => Some(sensitive::Declarations::parse(&file, &b, notes)),
                Pinned::Absent | Pinned::TooLarge => None,
                Pinned::Elsewhere => sensitive::Declarations::load(dir, &s.cwd, notes),
            };
            if let Some(d) = d {
                decls.insert(dir.clone(), d);
            }
        }
        decls
    }

    /// Decide each set variable's sensitivity (the warnings become
    /// notes), and which store values the caller already holds.
    fn classify(
        &self,
        a: &mut Assembly,
        decls: &BTreeMap<PathBuf, sensitive::Declarations>,
        held: &[(OsString, usize)],
    ) -> (BTreeMap<OsString, Sensitivity>, Vec<(OsString, bool)>) {
        let mut notes = Vec::new();
        let out = sensitive::classify(a, decls, &mut notes);
        for n in notes {
            a.note(n);
        }
        // Held by the caller: a plain file's equal value (no trace), or a
        // value an env.py set to what the base held (a touch, but no
        // change), still the caller's at the end.
        let scripts = a.touched_keys().filter_map(|k| {
            let t = a.touches(k).iter().rev().find(|t| {
                matches!(
                    t.action,
                    crate::core::Action::Set | crate::core::Action::Override
                )
            })?;
            (a.layers()[t.layer].info.kind == LayerKind::EnvScript).then(|| (k.clone(), t.layer))
        });
        let candidates: Vec<(OsString, usize)> = held.iter().cloned().chain(scripts).collect();
        let mut kept: Vec<(OsString, bool)> = Vec::new();
        for (name, layer) in candidates {
            let unchanged = !a.result().assigned().contains_key(&name)
                && a.final_value(&name).is_some()
                && a.final_value(&name) == a.base().get(&name).map(OsString::as_os_str);
            let root = a.layers()[layer]
                .info
                .path
                .as_deref()
                .and_then(Path::parent);
            let (public, sensitive) = root
                .and_then(|r| decls.get(r))
                .and_then(|d| d.declared(name.as_bytes()))
                .unwrap_or((false, false));
            let public = public || sensitive::is_computed_name(name.as_bytes());
            if unchanged && !public && !kept.iter().any(|(k, _)| *k == name) {
                kept.push((name, sensitive));
            }
        }
        (out, kept)
    }

    /// The secret references of `store` and of its overlays
    /// (docs/team-secrets.md#the-rules): a layer per `agentenv.toml` after
    /// the store's files, the overlays' first (name order) and the store's
    /// last, so the store's reference wins, as its env files do. All of
    /// them resolve in one [`crate::refs::resolve`] (one read per vault
    /// path across the store and its overlays). A project store's resolve
    /// only once it is allowed: with the trust gate, from the bytes it
    /// allowed; without, when its digest is allowed now (its references
    /// then read from that digest's bytes). A refusal contacts no backend.
    fn resolve_references(
        &self,
        a: &mut Assembly,
        store: &scope::Store,
        decls: &BTreeMap<PathBuf, sensitive::Declarations>,
        base: &Env,
        records: &mut Vec<RefRecord>,
    ) {
        // (directory, level, its path under the store, its references)
        let overlays = self.scope.overlays.iter().filter(|o| o.store == store.path);
        let mut sources: Vec<(&Path, &str, PathBuf, Vec<sensitive::Reference>)> = overlays
            .map(|o| {
                let rel = o.path.strip_prefix(&store.path).unwrap_or(&o.path);
                (o.path.as_path(), o.name.as_str(), rel.to_path_buf())
            })
            .chain([(store.path.as_path(), store.level, PathBuf::new())])
            .map(|(dir, level, rel)| {
                let refs = decls.get(dir).map(|d| d.references()).unwrap_or_default();
                (dir, level, rel, refs)
            })
            .collect();
        if sources.iter().all(|s| s.3.is_empty()) {
            return;
        }
        let cwd = &self.scope.cwd;
        if store.level == "project" && self.pinned.is_none() {
            let root = self
                .scope
                .project_root
                .clone()
                .unwrap_or_else(|| cwd.clone());
            let bounds = trust::Bounds::from_env(base);
            let allowed = (store.path == root.join(".agents"))
                .then(|| {
                    gate::decide(&paths::at(&root, cwd), base, bounds)
                        .verdict
                        .ok()
                })
                .flatten();
            let Some(allowed) = allowed else {
                for (dir, _, _, refs) in &sources {
                    for r in refs {
                        a.warn(format!(
                            "{}: reference {} not resolved: the project store {} is not allowed (agentenv allow {}); left unset",
                            r.name,
                            r.text,
                            store.path.display(),
                            root.display()
                        ));
                        records.push(RefRecord::refused(
                            r,
                            dir,
                            "the project store is not allowed",
                        ));
                    }
                }
                return;
            };
            // The references the allowed digest holds.
            let snap = &allowed.snapshot;
            for (dir, _, rel, refs) in &mut sources {
                let file = dir.join(sensitive::FILE_NAME);
                let mut notes = Vec::new();
                *refs = match snap.file(&snap.store.join(&*rel).join(sensitive::FILE_NAME)) {
                    Pinned::Bytes(b) => {
                        sensitive::Declarations::parse(&file, &b, &mut notes).references()
                    }
                    _ => Vec::new(),
                };
            }
        }
        // An overlay's reference of a name its store (or a later overlay)
        // references too would be replaced at once: not resolved (no
        // backend call, no warning), said with -v.
        for i in 0..sources.len() {
            let (earlier, later) = sources.split_at_mut(i + 1);
            let (dir, _, _, refs) = &mut earlier[i];
            refs.retain(|r| {
                let Some((by, _, _, _)) = later
                    .iter()
                    .rev()
                    .find(|s| s.3.iter().any(|l| l.name == r.name))
                else {
                    return true;
                };
                a.note(Note::info(format!(
                    "{}: reference {} ({}:{}) not resolved: {} references it too and wins",
                    r.name,
                    r.text,
                    dir.join(sensitive::FILE_NAME).display(),
                    r.line,
                    by.join(sensitive::FILE_NAME).display()
                )));
                false
            });
        }
        let started = std::time::Instant::now();
        let env = spawn_env(a.current(), base);
        let timeout =
            crate::refs::seconds(&env, "AGENTENV_REF_TIMEOUT", crate::refs::DEFAULT_TIMEOUT);
        let abs_store = paths::at(&store.path, cwd);
        let ctx = crate::refs::Ctx {
            env: &env,
            store: &abs_store,
            cwd,
            timeout,
        };
        // One call for them all; an overlay's age FILE is relative to the
        // overlay.
        let parsed: Vec<crate::refs::Ref> = sources
            .iter()
            .flat_map(|(_, _, rel, refs)| refs.iter().map(move |r| r.parsed.under(rel)))
            .collect();
        let all = sources.iter().flat_map(|s| s.3.iter());
        let pairs: Vec<(&str, &crate::refs::Ref)> =
            all.map(|r| r.text.as_str()).zip(parsed.iter()).collect();
        let mut resolved =
            crate::refs::resolve(&pairs, &ctx, started + timeout.min(self.timeout)).into_iter();
        for (dir, level, _, refs) in &sources {
            if refs.is_empty() {
                continue;
            }
            let file = dir.join(sensitive::FILE_NAME);
            let l = a.add_layer(
                LayerInfo::new(LayerKind::References)
                    .with_path(&file)
                    .with_level(*level),
            );
            let mut cs = ChangeSet::new();
            for (r, res) in refs.iter().zip(resolved.by_ref()) {
                match &res.value {
                    Ok(v) => cs.set_at(r.name.clone(), OsStr::from_bytes(v).to_os_string(), r.line),
                    Err(why) => a.warn(format!(
                        "{}: reference {} not resolved: {why}; left unset",
                        r.name, r.text
                    )),
                }
                records.push(RefRecord {
                    name: r.name.clone(),
                    text: r.text.clone(),
                    store: dir.to_path_buf(),
                    line: r.line,
                    outcome: match res.value {
                        Ok(_) => Ok((res.source, res.at)),
                        Err(why) => Err(why),
                    },
                    key: Some(res.key),
                });
            }
            a.apply(l, &cs);
            let note = trace::layer(
                LayerKind::References.as_str(),
                level,
                &file,
                None,
                started.elapsed(),
            );
            a.note(note);
        }
    }

    /// What the trust digest read at `f` (`Elsewhere` without a gate).
    fn pinned_file(&self, f: &EnvFile) -> Pinned {
        match &self.pinned {
            Some(s) => s.file(&paths::at(&f.path, &self.scope.cwd)),
            None => Pinned::Elsewhere,
        }
    }

    /// One env file's layer: run it, then its `-v` line.
    fn env_file(&self, a: &mut Assembly, run: &mut Run, f: &EnvFile, base: &Env) {
        let cwd = &self.scope.cwd;
        let kind = if f.script {
            LayerKind::EnvScript
        } else {
            LayerKind::PlainFile
        };
        let l = a.add_layer(LayerInfo::new(kind).with_path(&f.path).with_level(&f.level));
        let started = std::time::Instant::now();
        if f.script {
            self.run_script(a, l, f, base);
            run.memo.clear();
        } else {
            let bash = run.bash.get_or_insert_with(|| {
                let found = paths::which("bash", crate::core::get(base, "PATH"), cwd);
                if found.is_none() {
                    a.warn("no usable bash found: plain env files are skipped");
                }
                found
            });
            match bash.clone() {
                None => a.fail(l, "no usable bash found"),
                Some(bash) => self.run_plain(a, l, f, &bash, run, base),
            }
        }
        let note = trace::layer(
            kind.as_str(),
            &f.level,
            &f.path,
            a.layers()[l].failure.as_deref(),
            started.elapsed(),
        );
        a.note(note);
    }

    fn run_script(&self, a: &mut Assembly, l: usize, f: &EnvFile, base: &Env) {
        let cwd = &self.scope.cwd;
        let current = a.current();
        let interp = crate::core::get(current, "AGENTS_PYTHON")
            .filter(|p| !p.is_empty() && paths::at(Path::new(p), cwd).is_file())
            .map(PathBuf::from)
            .or_else(|| self.interpreter.clone());
        let mut env = spawn_env(current, base);
        env.insert("PYTHONIOENCODING".into(), "utf-8".into());
        // No `__pycache__` in a store: it would turn an allowed store
        // "changed" (and a stale `.pyc` is code the digest must cover).
        env.insert("PYTHONDONTWRITEBYTECODE".into(), "1".into());
        if let Some(v) = steps::script_pythonpath(current, &env) {
            env.insert("PYTHONPATH".into(), v);
        }
        let mut warnings = Vec::new();
        // A gated store's file runs from the bytes digested.
        let copy = match self.pinned_file(f) {
            Pinned::Bytes(b) => match pinned_copy(&b) {
                Ok(fd) => Some(fd),
                Err(e) => {
                    let why = crate::fsutil::io_kind(&e);
                    a.warn(format!("env.py could not run: {}: {why}", f.path.display()));
                    a.fail(l, why);
                    return;
                }
            },
            Pinned::TooLarge => return too_large(a, l, f),
            _ => None,
        };
        let result = script::run(
            interp.as_deref(),
            (&f.path, copy.as_ref().map(std::os::fd::AsRawFd::as_raw_fd)),
            &f.level,
            self.scope.global_scope(),
            &env,
            self.timeout,
            &mut warnings,
        );
        for w in warnings {
            a.warn(w);
        }
        match result {
            script::ScriptResult::Failed(why) => a.fail(l, why),
            script::ScriptResult::Changes(cs, skips) => {
                for s in skips {
                    a.skip(l, &s.key, s.reason, None);
                }
                a.apply(l, &cs);
            }
        }
    }

    /// A plain file's text through the native evaluator: `true` when it
    /// decided (applied, or failed), `false` when bash must source it.
    fn plain_natively(a: &mut Assembly, l: usize, f: &EnvFile, text: &[u8], run: &mut Run) -> bool {
        // The accumulated env, not the child's: the back-filled bootstrap
        // names are ones the evaluator always hands to bash, so the
        // outcome is the same without copying the environment per file.
        let mut held = Vec::new();
        match native::evaluate_held(text, a.current(), &mut run.memo, &mut held) {
            native::Outcome::Applied(cs) => {
                run.held.extend(held.into_iter().map(|k| (k, l)));
                a.note(Note::debug(format!(
                    "{}: evaluated natively (no bash)",
                    f.path.display()
                )));
                a.apply(l, &cs);
                true
            }
            native::Outcome::Failed => {
                a.warn(shell::failed_plain_file(&f.path, Some(text)));
                a.fail(l, "source failed");
                true
            }
            native::Outcome::Bash => false,
        }
    }

    fn run_plain(
        &self,
        a: &mut Assembly,
        l: usize,
        f: &EnvFile,
        bash: &Path,
        run: &mut Run,
        base: &Env,
    ) {
        let cwd = &self.scope.cwd;
        let full = paths::at(&f.path, cwd);
        let pinned = match self.pinned_file(f) {
            Pinned::Bytes(b) => Some(b),
            Pinned::TooLarge => return too_large(a, l, f),
            _ => None,
        };
        let read = match &pinned {
            Some(b) => Ok(b.to_vec()),
            None => crate::fsutil::read_input(&full, MAX_PLAIN_FILE),
        };
        let text = match read {
            Ok(text) => Some(text),
            Err(e) if crate::fsutil::input_error(&e).is_some() => {
                // Over the limit (or no longer a regular file): neither
                // read nor sourced, so memory stays bounded.
                let why = crate::fsutil::io_kind(&e);
                a.warn(format!("env file skipped: {}: {why}", f.path.display()));
                a.fail(l, why);
                return;
            }
            Err(_) => None,
        };
        if text.is_some_and(|text| Self::plain_natively(a, l, f, &text, run)) {
            return;
        }
        a.note(Note::debug(format!(
            "{}: sourced with bash",
            f.path.display()
        )));
        let env = spawn_env(a.current(), base);
        let mut warnings = Vec::new();
        // A gated store's file: bash sources the bytes digested, from a
        // private copy ([`pinned_copy`]), never the path again.
        let copy = match pinned.as_deref().map(|b| pinned_copy(b)).transpose() {
            Ok(c) => c,
            Err(e) => {
                let why = crate::fsutil::io_kind(&e);
                a.warn(format!(
                    "cannot source env file: {} ({why})",
                    f.path.display()
                ));
                a.fail(l, why);
                return;
            }
        };
        let from = copy
            .as_ref()
            .map(|fd| crate::platform::fd_path(std::os::fd::AsFd::as_fd(fd)));
        let sourced = shell::source(
            bash,
            &f.path,
            from.as_deref(),
            &env,
            self.timeout,
            &mut warnings,
        );
        // A child ran: it may have put an `env` program on PATH.
        run.memo.clear();
        for w in warnings {
            a.warn(w);
        }
        match sourced {
            Ok(cs) => a.apply(l, &cs),
            Err(e) => a.fail(
                l,
                match e {
                    shell::SourceError::Failed => "source failed",
                    shell::SourceError::CannotRun => "cannot run bash",
                    shell::SourceError::Timeout => "timed out",
                    shell::SourceError::TooLarge => "output over 16 MiB",
                },
            ),
        }
    }
}

/// A gated store's env file the digest found over 16 MiB: skipped.
fn too_large(a: &mut Assembly, l: usize, f: &EnvFile) {
    a.warn(format!(
        "env file skipped: {}: larger than 16 MiB",
        f.path.display()
    ));
    a.fail(l, "larger than 16 MiB");
}

/// `bytes` in a file only this process can reach, open read-only and
/// inherited by children (no close-on-exec), read from its start: what a
/// layer child runs instead of re-opening a store file by its path. On
/// Linux a sealed memfd ([`sealed_memfd`]); on the portable path an
/// unlinked owner-only file ([`unlinked_copy`]).
fn pinned_copy(bytes: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    #[cfg(target_os = "linux")]
    if !crate::platform::portable() {
        return sealed_memfd(bytes);
    }
    unlinked_copy(bytes)
}

/// `bytes` in a sealed memfd: no write, grow or shrink once sealed.
#[cfg(target_os = "linux")]
fn sealed_memfd(bytes: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{MemfdFlags, SealFlags};
    let fd = rustix::fs::memfd_create("agentenv-layer", MemfdFlags::ALLOW_SEALING)?;
    let mut done = 0;
    while done < bytes.len() {
        done += rustix::io::write(&fd, &bytes[done..])?;
    }
    rustix::fs::seek(&fd, rustix::fs::SeekFrom::Start(0))?;
    rustix::fs::fcntl_add_seals(
        &fd,
        SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE,
    )?;
    Ok(fd)
}

/// `bytes` in a file that has no name by the time anything runs: written
/// into a fresh `0700` directory of the temp dir as a `0600` file created
/// with `O_EXCL` (never through a link), opened again read-only, then
/// unlinked with its directory; the writing descriptor is closed. Checked
/// to be a regular file of this user with no link left and the length
/// written. No other user can open it at any point (the directory is
/// owner-only), and no one at all once it is unlinked; only the
/// read-only descriptor reaches the child.
fn unlinked_copy(bytes: &[u8]) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::Builder::new()
        .prefix("agentenv-layer.")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()?;
    let path = dir.path().join("bytes");
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&path)?;
    w.write_all(bytes)?;
    let r = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    drop(w);
    dir.close()?;
    let st = rustix::fs::fstat(&r)?;
    let odd = rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile
        || st.st_nlink != 0
        || st.st_uid != rustix::process::geteuid().as_raw()
        || st.st_size as u64 != bytes.len() as u64;
    if odd {
        return Err(std::io::Error::other(
            "the private copy is not the file written",
        ));
    }
    let fd = std::os::fd::OwnedFd::from(r);
    rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::empty())?;
    Ok(fd)
}

/// Largest plain env file evaluated (natively or by bash); a larger one is
/// skipped with a warning. Far beyond any real file, and as large as the
/// output bash may give back (`process::OUTPUT_LIMIT`).
pub(crate) const MAX_PLAIN_FILE: u64 = 16 << 20;

/// The environment `exec` gives its child: the base env with the result
/// applied (inherited `DOTAGENTS_*` kept).
pub(crate) fn child_env(session: &Session) -> Env {
    let mut env = session.assembly.base().clone();
    session.assembly.result().apply_to(&mut env);
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_that_ran_drops_the_path_memo() {
        let Some(_) = paths::which("bash", std::env::var_os("PATH").as_deref(), Path::new("/"))
        else {
            return;
        };
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        let user = w.join("home/.agents");
        std::fs::create_dir_all(user.join("bin")).unwrap();
        std::fs::create_dir_all(w.join("proj/.agents")).unwrap();
        // Pre tier: the user file is evaluated natively (the memo now says
        // "the system's env"); the project file needs bash, and puts an
        // `env` program in the user store's bin, which is first on PATH.
        std::fs::write(user.join("pre.env"), "A=1\n").unwrap();
        std::fs::write(
            w.join("proj/.agents/pre.env"),
            "printf '#!/bin/sh\\n' > \"$AGENTS_HOME/bin/env\"; chmod 755 \"$AGENTS_HOME/bin/env\"\n",
        )
        .unwrap();
        // Main tier: assignment-only, but the lookup must be made again.
        std::fs::write(user.join("env"), "B=2\n").unwrap();
        let mut base = Env::new();
        base.insert("HOME".into(), w.join("home").into());
        base.insert("PATH".into(), "/usr/bin:/bin".into());
        base.insert("AGENTS_SYSTEM_ROOT".into(), w.join("none").into());
        let opts = Options {
            cwd: Some(w.join("proj")),
            ..Default::default()
        };
        let s = assemble(&opts, base).unwrap();
        let debug: Vec<&str> = s
            .assembly
            .notes()
            .iter()
            .filter(|n| n.level == crate::core::Level::Debug)
            .map(|n| n.text.as_str())
            .collect();
        let user_pre = format!(
            "{}: evaluated natively (no bash)",
            user.join("pre.env").display()
        );
        let user_main = format!("{}: sourced with bash", user.join("env").display());
        assert!(debug.contains(&user_pre.as_str()), "{debug:?}");
        assert!(debug.contains(&user_main.as_str()), "{debug:?}");
    }
}

#[cfg(test)]
mod sensitivity_tests {
    use super::*;

    #[test]
    fn layer_values_are_sensitive_unless_their_own_store_declares_them() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        let user = w.join("home/.agents");
        let proj = w.join("proj/.agents");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::write(
            user.join("env"),
            "TOKEN=user-secret\nLOG_LEVEL=debug\nFEATURE_X=on\n",
        )
        .unwrap();
        std::fs::write(
            user.join("agentenv.toml"),
            "[vars]\nLOG_LEVEL = { public = true, description = \"log level\" }\n\"FEATURE_*\" = { public = true }\n",
        )
        .unwrap();
        std::fs::write(proj.join("env"), "PROJ=p-value\n").unwrap();
        std::fs::write(
            proj.join("agentenv.toml"),
            "[vars]\nTOKEN = { public = true }\nPROJ = { public = true }\n",
        )
        .unwrap();
        let mut base = Env::new();
        base.insert("HOME".into(), w.join("home").into());
        base.insert("PATH".into(), "/usr/bin:/bin".into());
        base.insert("AGENTS_SYSTEM_ROOT".into(), w.join("none").into());
        base.insert("BASE_ONLY".into(), "b".into());
        let opts = Options {
            cwd: Some(w.join("proj")),
            ..Default::default()
        };
        let s = assemble(&opts, base).unwrap();
        assert!(s.is_public("LOG_LEVEL") && s.is_public("FEATURE_X") && s.is_public("PROJ"));
        assert!(s.is_public("AGENTS_HOME") && s.is_public("PATH"));
        // The project store cannot unmask the user store's value.
        assert!(!s.is_public("TOKEN"));
        assert_eq!(
            s.sensitivity("TOKEN").decided_by,
            DecidedBy::Store(user.clone())
        );
        assert!(!s.is_public("BASE_ONLY"));
        assert_eq!(s.sensitivity("BASE_ONLY").decided_by, DecidedBy::Base);
        let l = s.sensitivity("LOG_LEVEL");
        assert_eq!(l.description.as_deref(), Some("log level"));
        assert_eq!(
            l.decided_by,
            DecidedBy::Declaration {
                file: user.join("agentenv.toml"),
                line: 2
            }
        );
        assert_eq!(
            s.sensitive_values(),
            vec![("TOKEN".to_string(), b"user-secret".to_vec())]
        );
    }
}
