//! The session's front door: [`plan`] decides everything a session run
//! needs before any layer runs — the project root (the reference's rule,
//! or the shell hook's walk-up), the trust decision, the scope and its
//! candidates ([`super::prepare`]), and the cache probe — and records what
//! it had to say as [`Note`]s, in order. The caller prints the notes, then
//! either replays [`Plan::cached`] or runs [`Plan::assemble`], renders,
//! and keeps the rendering with [`Plan::store`].
//!
//! `env`, `exec`, `explain`, `redact`, `audit`, `status` and the shell
//! hook's load all start here, so they share every rule by construction.
//!
//! Not for: rendering ([`crate::render`]), the shell code of the hook
//! (`crate::hook`).

use super::{cache, gate, paths, trace, Error, Options, Prepared, Session};
use crate::core::{Env, Note};
use std::path::{Path, PathBuf};

/// Which rule decides the project root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootRule {
    /// The reference's: `$AGENTS_PROJECT_ROOT`, `$CLAUDE_PROJECT_DIR`,
    /// else the cwd (`env`, `exec`, `explain`, `status`); the trust gate
    /// only when required.
    Reference,
    /// The shell hook's: the nearest directory upwards holding `.agents`
    /// (not above `$HOME`), always behind the trust gate.
    WalkUp,
    /// The reference's, never gated (`audit --all-stores` reads every
    /// store's values).
    Ungated,
}

/// Whether, and how, the rendering is kept in the session cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheMode {
    Off,
    /// `env --cache`: replay an identical run (keyed on `format` as given,
    /// `--diff`, `--public-only`); when the cache cannot be used, a
    /// warning and an uncached run.
    Replay {
        format: String,
        diff: bool,
        public_only: bool,
    },
    /// The shell hook's env part (keyed on `format`, always a diff): only
    /// when the user store exists (it is never created) and
    /// `AGENTENV_HOOK_CACHE` is not `0`; the cache directory is made now
    /// (before the hook's stamp); silently off when it cannot be used.
    Hook {
        format: String,
    },
    /// The agent hooks' entry of sensitive values (keyed on `format`, a
    /// public-only diff): one still fresh `fresh_for` from now; the cache
    /// directory is made when the entry is kept ([`Plan::keep`]); a cache
    /// that cannot be used is the caller's error ([`Plan::cache_error`]).
    Entry {
        format: String,
        fresh_for: std::time::Duration,
    },
}

/// What the caller asks for.
#[derive(Debug, Clone)]
pub struct Request {
    /// The scope flags, the cwd, the timeout, the agent.
    pub options: Options,
    pub root: RootRule,
    /// `--require-trust` (with [`RootRule::Reference`]; also
    /// `AGENTENV_REQUIRE_TRUST=1`).
    pub require_trust: bool,
    pub cache: CacheMode,
    /// Record `-v`'s lines about the root, the stores and the cache miss.
    pub trace: bool,
}

impl Request {
    /// A request for `options` with the reference's root rule, no cache
    /// and no trace.
    pub fn new(options: Options) -> Request {
        Request {
            options,
            root: RootRule::Reference,
            require_trust: false,
            cache: CacheMode::Off,
            trace: false,
        }
    }
}

/// What the cache probe found.
#[derive(Debug, Clone)]
enum Probe {
    Off,
    Unusable(String),
    Hit { bytes: Vec<u8>, entry: PathBuf },
    Miss { dir: PathBuf, key: String },
}

/// A planned session: decided, not yet run.
#[derive(Debug, Clone)]
pub struct Plan {
    prepared: Prepared,
    base: Env,
    /// The options as requested, and after the trust gate.
    requested: Options,
    options: Options,
    decision: Option<gate::Decision>,
    probe: Probe,
    notes: Vec<Note>,
    /// The assembled session had secret references: nothing of it is
    /// kept in the cache (their values never touch the disk).
    no_store: std::cell::Cell<bool>,
}

/// Decide root → trust → scope → cache probe for `req` over `base`. Runs
/// nothing; prints nothing (see [`Plan::take_notes`]).
pub fn plan(req: &Request, base: &Env) -> Result<Plan, Error> {
    let mut options = req.options.clone();
    let mut notes = Vec::new();
    let decision = match req.root {
        RootRule::Reference if gate::required(req.require_trust, base) => {
            gate::on_reference_root(&mut options, base, &mut notes)
        }
        RootRule::Reference | RootRule::Ungated => None,
        RootRule::WalkUp => {
            let cwd = match &options.cwd {
                Some(c) => c.clone(),
                None => std::env::current_dir().map_err(|e| Error::current_dir(&e))?,
            };
            options.cwd = Some(cwd.clone());
            gate::on_walk_up(&mut options, base, &cwd)
        }
    };
    let mut prepared = super::prepare(&options, base)?;
    notes.append(&mut prepared.notes);
    let given = options.project_root.is_some();
    if req.trace {
        notes.extend(trace::scope(&prepared, base, given));
    }
    let probe = match &req.cache {
        CacheMode::Off => Probe::Off,
        CacheMode::Replay {
            format,
            diff,
            public_only,
        } => replay_probe(
            &prepared,
            base,
            format,
            *diff,
            *public_only,
            req.trace,
            &mut notes,
        ),
        CacheMode::Hook { format } => hook_probe(&prepared, base, format),
        CacheMode::Entry { format, fresh_for } => entry_probe(&prepared, base, format, *fresh_for),
    };
    Ok(Plan {
        prepared,
        base: base.clone(),
        requested: req.options.clone(),
        options,
        decision,
        probe,
        notes,
        no_store: std::cell::Cell::new(false),
    })
}

/// `env --cache`'s probe: the entry, or where to keep the run's.
fn replay_probe(
    prepared: &Prepared,
    base: &Env,
    format: &str,
    diff: bool,
    public_only: bool,
    trace: bool,
    notes: &mut Vec<Note>,
) -> Probe {
    let user_root = &prepared.scope.user_root;
    if prepared.scope.user_refused.is_some() || foreign_parent(user_root) {
        // Never a file of ours in a store we do not load (another user's),
        // nor a new store in another user's directory.
        notes.push(Note::warning(
            "the user store is not loaded or not ours to create; running uncached",
        ));
        return Probe::Off;
    }
    let dir = cache::dir_for(user_root);
    if let Err(why) = cache::usable_dir(&dir) {
        notes.push(Note::warning(format!(
            "cache directory {} {}; running uncached",
            dir.display(),
            why.describe()
        )));
        return Probe::Off;
    }
    let parts = cache::key_parts(prepared, base, format, diff, public_only);
    let key = parts.key.clone();
    match cache::lookup(&dir, &key) {
        Some(bytes) => {
            notes.push(Note::info(format!(
                "cache hit: {} (no layer runs)",
                dir.join(&key).display()
            )));
            Probe::Hit {
                entry: dir.join(&key),
                bytes,
            }
        }
        None => {
            if trace {
                let changed = parts.changed_since_kept(&dir);
                notes.push(Note::info(format!(
                    "cache miss: {}",
                    trace::cache_miss_reason(&dir, &key, changed.as_deref())
                )));
            }
            parts.keep(&dir);
            Probe::Miss { dir, key }
        }
    }
}

/// The shell hook's probe (see [`CacheMode::Hook`]).
fn hook_probe(prepared: &Prepared, base: &Env, format: &str) -> Probe {
    let scope = &prepared.scope;
    let wanted = crate::core::get(base, "AGENTENV_HOOK_CACHE").is_none_or(|v| v != "0")
        && scope.user_refused.is_none()
        && scope.user_root.is_dir();
    if !wanted {
        return Probe::Off;
    }
    let dir = cache::dir_for(&scope.user_root);
    // Made before the hook's stamp: creating `.cache` changes the store's
    // time, which would otherwise look like an edit at the next prompt.
    if cache::usable_dir(&dir).is_err() || cache::create_dir(&dir).is_err() {
        return Probe::Off;
    }
    let key = cache::key_for(prepared, base, format, true);
    match cache::lookup(&dir, &key) {
        Some(bytes) => Probe::Hit {
            entry: dir.join(&key),
            bytes,
        },
        None => Probe::Miss { dir, key },
    }
}

/// The agent hooks' probe (see [`CacheMode::Entry`]).
fn entry_probe(
    prepared: &Prepared,
    base: &Env,
    format: &str,
    fresh_for: std::time::Duration,
) -> Probe {
    let user_root = &prepared.scope.user_root;
    if prepared.scope.user_refused.is_some() || foreign_parent(user_root) {
        // As in `replay_probe`: nothing of ours in another user's store
        // or home.
        return Probe::Unusable(format!(
            "the user store {} is not loaded or not ours to create, so it holds no cache entry",
            user_root.display()
        ));
    }
    let dir = cache::dir_for(user_root);
    if let Err(why) = cache::usable_dir(&dir) {
        return Probe::Unusable(format!(
            "the cache directory {} {}",
            dir.display(),
            why.describe()
        ));
    }
    let key = cache::key_with(prepared, base, format, true, true);
    match cache::lookup_at(&dir, &key, std::time::SystemTime::now() + fresh_for) {
        Some(bytes) => Probe::Hit {
            entry: dir.join(&key),
            bytes,
        },
        None => Probe::Miss { dir, key },
    }
}

/// The user store is missing and its parent directory belongs to another
/// user (root with that user's HOME): the cache would create a store there.
fn foreign_parent(store: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if store.exists() {
        return false;
    }
    let euid = rustix::process::geteuid().as_raw();
    store
        .parent()
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.uid() != euid)
}

impl Plan {
    /// What deciding had to say (the gate's refusal, the scope's
    /// warnings, `-v`'s lines, the cache's hit or miss), in order, taken
    /// out: the caller prints them once.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }

    /// The rendering a cache hit replays (no layer runs).
    pub fn cached(&self) -> Option<&[u8]> {
        match &self.probe {
            Probe::Hit { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// Run the layers. Their notes are on the session's assembly.
    pub fn assemble(&self) -> Session {
        let s = self.prepared.clone().assemble(self.base.clone());
        if !s.references().is_empty() {
            self.no_store.set(true);
        }
        s
    }

    /// Keep `rendering` for the next identical run (after a miss; nothing
    /// otherwise).
    pub fn store(&self, rendering: &[u8]) {
        if self.no_store.get() {
            return;
        }
        if let Probe::Miss { dir, key } = &self.probe {
            cache::store(dir, key, rendering);
        }
    }

    /// Why the cache cannot be used ([`CacheMode::Entry`] only).
    pub fn cache_error(&self) -> Option<&str> {
        match &self.probe {
            Probe::Unusable(why) => Some(why),
            _ => None,
        }
    }

    /// The cache entry's path (hit or miss).
    pub fn cache_entry(&self) -> Option<PathBuf> {
        match &self.probe {
            Probe::Hit { entry, .. } => Some(entry.clone()),
            Probe::Miss { dir, key } => Some(dir.join(key)),
            _ => None,
        }
    }

    /// [`Plan::store`] into a cache directory made now, then read back:
    /// `Err` when the directory cannot be made (the message names it),
    /// `Ok(None)` when the entry cannot be read back.
    pub fn keep(&self, rendering: &[u8]) -> Result<Option<PathBuf>, String> {
        let Probe::Miss { dir, key } = &self.probe else {
            return Ok(None);
        };
        if cache::create_dir(dir).is_err() {
            return Err(format!(
                "cannot create the cache directory {}",
                dir.display()
            ));
        }
        cache::store(dir, key, rendering);
        Ok(cache::lookup(dir, key).map(|_| dir.join(key)))
    }

    /// The user store (where the cache lives), loaded or not.
    pub fn user_store(&self) -> &Path {
        &self.prepared.scope.user_root
    }

    /// The scope and candidates.
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// The base environment the plan was made over.
    pub fn base(&self) -> &Env {
        &self.base
    }

    /// The trust decision, when the gate made one.
    pub fn decision(&self) -> Option<&gate::Decision> {
        self.decision.as_ref()
    }

    /// The options as requested (before the trust gate).
    pub(crate) fn requested(&self) -> &Options {
        &self.requested
    }

    /// Whether the project root was fixed by the caller or the trust gate
    /// rather than by the reference's rule (under [`RootRule::WalkUp`]:
    /// whether a project store loads at all).
    pub fn root_fixed(&self) -> bool {
        self.options.project_root.is_some()
    }

    /// Whether the trust gate left the project store out (walking the
    /// other stores only, as `-g`).
    pub fn gated_out(&self) -> bool {
        self.options.global && !self.requested.global
    }

    /// `explain`'s note when a variable, not the cwd, decided the project
    /// root (the `~/.bashrc` trap).
    pub fn root_note(&self) -> Option<String> {
        trace::project_root_note(&self.prepared, &self.base, self.root_fixed())
    }

    /// The shell hook's watch list: every path whose change should reload
    /// — each store and its `overlays/` (a file created or removed there
    /// changes the directory's time), each overlay, every existing env
    /// file, the project root (or the cwd outside a project: a new
    /// `.agents`), the trust records under `state`, and an allowed store's
    /// `bin/` and `lib/` with what is under them (a program added or
    /// changed there blocks the store at the next prompt). An allowed store
    /// is watched by its real paths.
    pub fn watch_list(&self, state: Option<&Path>) -> Vec<PathBuf> {
        let p = &self.prepared;
        let cwd = &p.scope.cwd;
        let decision = self.decision.as_ref();
        let allowed = decision.and_then(|d| d.verdict.as_ref().ok());
        // Real paths only: nothing another user can re-point stays watched.
        let refused_root =
            decision.map(|d| std::fs::canonicalize(&d.root).unwrap_or(d.root.clone()));
        let root = match (&refused_root, allowed) {
            (_, Some(a)) => Some(a.real_root.as_path()),
            (Some(r), None) => Some(r.as_path()),
            (None, _) => None,
        };
        let mut w: Vec<PathBuf> = Vec::new();
        let mut add = |x: PathBuf| {
            if !w.contains(&x) {
                w.push(x);
            }
        };
        add(root.unwrap_or(cwd).to_path_buf());
        match (decision, allowed) {
            (_, Some(a)) => {
                add(a.snapshot.store.clone());
                for w in a.snapshot.watch() {
                    add(w);
                }
            }
            // Watched even when not loaded: creating a file there is how a
            // store changes; allow/deny changes the records dir.
            (Some(d), None) => {
                if !gate::foreign_link(&d.store) {
                    add(std::fs::canonicalize(&d.store).unwrap_or(d.store.clone()));
                }
            }
            (None, _) => {}
        }
        for s in &p.scope.stores {
            if s.path.is_dir() {
                add(s.path.clone());
                add(s.path.join("overlays"));
            } else if let Some(parent) = s.path.parent() {
                add(parent.to_path_buf());
            }
        }
        for o in &p.scope.overlays {
            add(o.path.clone());
        }
        // Each store's and overlay's agentenv.toml (declarations, secret
        // references): an edit in place changes no directory.
        let tomls = p.scope.stores.iter().map(|s| &s.path);
        for dir in tomls.chain(p.scope.overlays.iter().map(|o| &o.path)) {
            let toml = dir.join(super::sensitive::FILE_NAME);
            if toml.is_file() {
                add(toml);
            }
        }
        for f in &p.env_files {
            let full = paths::at(&f.path, cwd);
            if full.exists() {
                add(full.to_path_buf());
            }
        }
        if let Some(s) = state {
            // Made with the stamp, so allow/deny change this directory only.
            add(crate::session::trust::records_dir(s));
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home with a user store, and a project with its own store.
    fn world() -> (tempfile::TempDir, Env) {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        std::fs::create_dir_all(w.join("home/.agents")).unwrap();
        std::fs::create_dir_all(w.join("home/proj/.agents")).unwrap();
        std::fs::create_dir_all(w.join("home/proj/sub")).unwrap();
        std::fs::write(w.join("home/.agents/env"), "U=1\n").unwrap();
        std::fs::write(w.join("home/proj/.agents/env"), "P=1\n").unwrap();
        let mut base = Env::new();
        base.insert("HOME".into(), w.join("home").into());
        base.insert("PATH".into(), "/usr/bin:/bin".into());
        base.insert("AGENTS_SYSTEM_ROOT".into(), w.join("no-system").into());
        base.insert("XDG_STATE_HOME".into(), w.join("state").into());
        (d, base)
    }

    fn sets(s: &Session, name: &str) -> bool {
        s.changes()
            .assigned()
            .contains_key(std::ffi::OsStr::new(name))
    }

    fn at(cwd: PathBuf) -> Options {
        Options {
            cwd: Some(cwd),
            ..Default::default()
        }
    }

    #[test]
    fn the_gate_leaves_an_unallowed_project_out_and_says_so() {
        let (d, base) = world();
        let w = d.path();
        let req = Request {
            require_trust: true,
            ..Request::new(at(w.join("home/proj")))
        };
        let mut p = plan(&req, &base).unwrap();
        assert!(p.gated_out() && !p.root_fixed());
        let notes = p.take_notes();
        let store = w.join("home/proj/.agents");
        let want = format!(
            "{} is not allowed; run 'agentenv allow' to load it (walking the other stores only)",
            store.display()
        );
        assert!(notes.iter().any(|n| n.text == want), "{notes:?}");
        let s = p.assemble();
        assert!(sets(&s, "U") && !sets(&s, "P"));
        // `status` names the store the gate skipped, and why.
        let st = p.status("export").unwrap();
        let row = st.stores.iter().find(|r| r.level == "project").unwrap();
        assert_eq!((row.state, row.trust.as_str()), ("skipped", "not allowed"));

        // Without the gate the same request loads the project.
        let p = plan(&Request::new(at(w.join("home/proj"))), &base).unwrap();
        assert!(!p.gated_out());
        let s = p.assemble();
        assert!(sets(&s, "P"));
    }

    #[test]
    fn walk_up_finds_the_root_above_the_cwd_and_gates_it() {
        let (d, base) = world();
        let w = d.path();
        let req = Request {
            root: RootRule::WalkUp,
            ..Request::new(at(w.join("home/proj/sub")))
        };
        let p = plan(&req, &base).unwrap();
        let decision = p.decision().expect("a project above the cwd");
        assert_eq!(decision.root, w.join("home/proj"));
        assert!(decision.verdict.is_err() && !p.root_fixed());
        // Not loaded, still watched: creating a file there is how it changes.
        let watch = p.watch_list(None);
        let store = std::fs::canonicalize(w.join("home/proj/.agents")).unwrap();
        assert!(watch.contains(&store), "{watch:?}");
    }

    #[test]
    fn a_replay_miss_is_kept_and_the_next_plan_hits() {
        let (d, base) = world();
        let w = d.path();
        let req = Request {
            cache: CacheMode::Replay {
                format: "json".into(),
                diff: true,
                public_only: false,
            },
            ..Request::new(at(w.join("home/proj")))
        };
        let p = plan(&req, &base).unwrap();
        assert!(p.cached().is_none());
        p.store(b"{\"rendered\": 1}\n");
        let mut again = plan(&req, &base).unwrap();
        assert_eq!(again.cached(), Some(&b"{\"rendered\": 1}\n"[..]));
        let notes = again.take_notes();
        assert!(
            notes.iter().any(|n| n.text.starts_with("cache hit: ")),
            "{notes:?}"
        );
        // Another format is another key.
        let other = Request {
            cache: CacheMode::Replay {
                format: "export".into(),
                diff: true,
                public_only: false,
            },
            ..req
        };
        assert!(plan(&other, &base).unwrap().cached().is_none());
    }

    #[test]
    fn status_json_keeps_its_keys_in_their_order() {
        let (d, base) = world();
        let w = d.path();
        std::fs::create_dir_all(w.join("home/.agents/overlays/o1")).unwrap();
        let p = plan(&Request::new(at(w.join("home/proj"))), &base).unwrap();
        let v = serde_json::to_value(p.status("export").unwrap()).unwrap();
        let keys = |v: &serde_json::Value| -> Vec<String> {
            v.as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(
            keys(&v),
            [
                "directory",
                "project_root",
                "project_root_rule",
                "hook_root",
                "hook_root_trust",
                "scope",
                "interpreter",
                "stores",
                "overlays",
                "files",
                "bin",
                "lib",
                "cache",
                "references"
            ]
        );
        assert_eq!(
            keys(&v["stores"][0]),
            ["level", "path", "state", "why", "trust"]
        );
        assert_eq!(keys(&v["overlays"][0]), ["name", "path", "store"]);
        let plain = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["exists"] == true && f["kind"] == "plain")
            .unwrap();
        assert_eq!(
            keys(plain),
            ["tier", "level", "path", "kind", "exists", "evaluated"]
        );
        let missing = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["exists"] == false)
            .unwrap();
        assert_eq!(keys(missing), ["tier", "level", "path", "kind", "exists"]);
        assert_eq!(keys(&v["bin"][0]), ["path", "exists"]);
        assert_eq!(keys(&v["cache"]), ["dir", "usable", "why", "lookups"]);
        assert_eq!(keys(&v["cache"]["lookups"][0]), ["invocation", "hit"]);
    }
}
