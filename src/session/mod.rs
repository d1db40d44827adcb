//! The session environment (`agentenv env`, `exec`, `explain`): the
//! reference `dotagents env` 0.8.2 rebuilt as layers over [`crate::core`].
//!
//! Contract A (`scope.rs`) decides which stores and overlays are walked and
//! in which order; contract B ([`assemble`]) turns the walk into layers —
//! identity, roots, interpreter pin, PATH, libs, overlay roots, every
//! `env.py` and plain file of both tiers, the proxy model — each applied to
//! one [`Assembly`] with its [`LayerKind`], so `explain` can show where every
//! variable came from and `--cache` can key on the same scope.
//!
//! Not for: rendering ([`crate::render`]), the cache and `--into`
//! (`cache.rs`, `into.rs`).

pub(crate) mod cache;
/// The provenance view lives in `core` (it is generic over an assembly).
pub(crate) use crate::core::explain;
pub(crate) mod identity;
pub(crate) mod into;
pub(crate) mod native;
pub(crate) mod paths;
pub(crate) mod pyjson;
pub(crate) mod scope;
pub(crate) mod script;
pub(crate) mod shell;
pub(crate) mod trace;

use crate::core::{Assembly, ChangeSet, Env, LayerInfo, LayerKind};
use scope::{Scope, ScopeInput, WalkEntry};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

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
}

/// An assembled session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The scope and candidates it was assembled from.
    pub prepared: Prepared,
    /// The layers, their provenance and the result.
    pub assembly: Assembly,
}

impl Session {
    /// The full result (set + removed) of the assembly.
    pub fn changes(&self) -> &ChangeSet {
        self.assembly.result()
    }
}

/// The timeout from `$AGENTS_ENV_TIMEOUT` or the default.
pub(crate) fn timeout_from_env(base: &Env) -> Duration {
    let default = Duration::from_secs_f64(crate::process::DEFAULT_TIMEOUT_SECS);
    match crate::core::get(base, "AGENTS_ENV_TIMEOUT") {
        None => default,
        Some(v) if v.is_empty() => default,
        Some(v) => match v.to_str().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Duration::from_secs_f64(s),
            _ => {
                crate::warn!(
                    "ignoring $AGENTS_ENV_TIMEOUT: not a positive number of seconds; using {} s",
                    crate::process::DEFAULT_TIMEOUT_SECS
                );
                default
            }
        },
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
pub fn prepare(opts: &Options, base: &Env) -> Result<Prepared, String> {
    let cwd = match &opts.cwd {
        Some(c) => c.clone(),
        None => std::env::current_dir().map_err(|e| {
            format!(
                "cannot read the current directory: {}",
                crate::process::io_kind(&e)
            )
        })?,
    };
    let input = ScopeInput {
        global: opts.global,
        agents_dir: opts.agents_dir.clone(),
        project_root: opts.project_root.clone(),
    };
    let scope = Scope::resolve(&input, base, &cwd)?;
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
    let bin_paths = entries(scope.walk(scope::BIN, true));
    Ok(Prepared {
        interpreter: default_interpreter(base, &cwd),
        timeout: opts.timeout.unwrap_or_else(|| timeout_from_env(base)),
        agent: opts.agent.clone(),
        scope,
        env_files,
        lib_candidates,
        bin_paths,
    })
}

/// Resolve and assemble.
pub fn assemble(opts: &Options, base: Env) -> Result<Session, String> {
    let prepared = prepare(opts, &base)?;
    Ok(prepared.assemble(base))
}

fn b(p: &Path) -> &[u8] {
    p.as_os_str().as_bytes()
}

fn anchored(e: &[u8]) -> bool {
    !e.is_empty() && (e[0] == b'/' || e[0] == b'\\')
}

/// The reference's `_prepended_path_var`: `entries` at the front in their
/// order, inherited empty/relative entries and copies of ours dropped.
/// `None` when the value would not change.
pub(crate) fn prepend_path(current: Option<&OsStr>, entries: &[Vec<u8>]) -> Option<OsString> {
    let cur = current.map(|c| c.as_bytes()).unwrap_or(b"");
    let mut list: Vec<Vec<u8>> = cur
        .split(|c| *c == b':')
        .filter(|e| anchored(e) && !entries.iter().any(|o| o.as_slice() == *e))
        .map(|e| e.to_vec())
        .collect();
    for e in entries {
        if !list.contains(e) {
            list.insert(0, e.clone());
        }
    }
    let joined = list.join(&b':');
    (joined != cur).then(|| OsString::from_vec(joined))
}

/// `<x>/.pyvenv/<anything>/overlays` (a venv's launcher dir), lexically.
fn is_launcher_dir(e: &[u8]) -> bool {
    let n = paths::normpath(e);
    let mut parts: Vec<&[u8]> = Vec::new();
    if n.starts_with(b"/") {
        parts.push(b"/");
    }
    parts.extend(n.split(|c| *c == b'/').filter(|p| !p.is_empty()));
    parts.len() >= 3
        && parts[parts.len() - 1] == b"overlays"
        && parts[parts.len() - 3] == b".pyvenv"
}

/// `…/.pyvenv/<any>/<any>/<file>`: a store venv's interpreter.
fn is_pyvenv_python(p: &OsStr) -> bool {
    let norm = paths::pathlib(p);
    let mut anc = norm.ancestors().skip(1);
    let _ = anc.next();
    let _ = anc.next();
    match anc.next() {
        Some(a) => a.file_name().is_some_and(|n| n == ".pyvenv"),
        None => false,
    }
}

/// Variables a child needs to start, backfilled from the base env.
const BOOTSTRAP: &[&str] = &[
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

fn cs1(k: &str, v: impl Into<OsString>) -> ChangeSet {
    let mut c = ChangeSet::new();
    c.set(k, v);
    c
}

fn rm1(k: &str) -> ChangeSet {
    let mut c = ChangeSet::new();
    c.remove(k);
    c
}

impl Prepared {
    /// Contract B over `base` (reference §3).
    pub fn assemble(self, base: Env) -> Session {
        let mut a = Assembly::new(base.clone());
        let s = &self.scope;
        let cwd = s.cwd.clone();
        let get =
            |a: &Assembly, k: &str| crate::core::get(a.current(), k).map(|v| v.to_os_string());

        // Identity.
        let l = a.add_layer(LayerInfo::new(LayerKind::Identity));
        let id = identity::stamp(a.current(), self.agent.as_deref());
        a.apply(l, &id);

        // Roots.
        let l = a.add_layer(LayerInfo::new(LayerKind::Roots));
        let project_root = match &s.project_root {
            Some(p) => p.clone(),
            None => {
                let d = scope::project_root_default(&base, &cwd).unwrap_or_else(|_| cwd.clone());
                paths::abspath(&d, &cwd)
            }
        };
        let pin_walked = |a: &mut Assembly, key: &str, value: &Path| {
            if let Some(cur) = get(a, key).filter(|c| !c.is_empty()) {
                if paths::realpath(Path::new(&cur), &cwd) == paths::realpath(value, &cwd) {
                    return;
                }
            }
            a.apply(l, &cs1(key, value.as_os_str()));
        };
        pin_walked(&mut a, "AGENTS_HOME", &s.user_root);
        if s.project_root.is_some() {
            pin_walked(&mut a, "AGENTS_PROJECT_ROOT", &project_root);
        } else if get(&a, "AGENTS_PROJECT_ROOT").is_none_or(|v| v.is_empty()) {
            a.apply(l, &cs1("AGENTS_PROJECT_ROOT", project_root.as_os_str()));
        }

        // Interpreter pin (no store venvs: AGENTS_PYVENV goes, AGENTS_PYLIB never).
        let l = a.add_layer(LayerInfo::new(LayerKind::Interpreter));
        if let Some(py) = &self.interpreter {
            let pinned = get(&a, "AGENTS_PYTHON");
            let py = py.as_os_str();
            let differs = pinned.as_deref() != Some(py);
            let replace = match &pinned {
                None => true,
                Some(p) if p.is_empty() => true,
                Some(p) => p == py || is_pyvenv_python(p),
            };
            if !py.is_empty() && differs && replace {
                a.apply(l, &cs1("AGENTS_PYTHON", py));
            }
        }
        if a.current().contains_key(OsStr::new("AGENTS_PYVENV")) {
            a.apply(l, &rm1("AGENTS_PYVENV"));
        }

        // Overlay roots.
        for o in &s.overlays {
            let l = a.add_layer(
                LayerInfo::new(LayerKind::OverlayRoot)
                    .with_path(&o.path)
                    .with_level(&o.name),
            );
            let var = o.root_var();
            let pinned = get(&a, &var);
            let store_copy = s.user_root.join("overlays").join(&o.name);
            match pinned {
                Some(p) if !p.is_empty() => {
                    if p == store_copy.as_os_str() && o.path != store_copy {
                        a.apply(l, &cs1(&var, o.path.as_os_str()));
                    }
                }
                _ => a.apply(l, &cs1(&var, o.path.as_os_str())),
            }
        }

        // PATH: bins first (missing dirs too), then the launcher-dir filter.
        let l = a.add_layer(LayerInfo::new(LayerKind::BinPaths));
        let bins: Vec<Vec<u8>> = self.bin_paths.iter().map(|p| b(p).to_vec()).collect();
        if let Some(v) = prepend_path(get(&a, "PATH").as_deref(), &bins) {
            a.apply(l, &cs1("PATH", v));
        }
        let path = get(&a, "PATH").unwrap_or_default();
        let pb = path.as_bytes();
        let kept: Vec<&[u8]> = if pb.is_empty() {
            Vec::new()
        } else {
            pb.split(|c| *c == b':')
                .filter(|e| e.is_empty() || !is_launcher_dir(e))
                .collect()
        };
        let joined = kept.join(&b':');
        if joined != pb {
            a.apply(l, &cs1("PATH", OsString::from_vec(joined)));
        }

        // Libs: AGENTS_PYTHONPATH and PYTHONPATH.
        let l = a.add_layer(LayerInfo::new(LayerKind::LibPaths));
        let mut libs: Vec<Vec<u8>> = Vec::new();
        for p in self.lib_candidates.iter().rev() {
            if paths::at(p, &cwd).is_dir() && !libs.iter().any(|x| x == b(p)) {
                libs.push(b(p).to_vec());
            }
        }
        let inherited_app = get(&a, "AGENTS_PYTHONPATH");
        let stale: Vec<Vec<u8>> = inherited_app
            .as_deref()
            .map(|v| {
                v.as_bytes()
                    .split(|c| *c == b':')
                    .filter(|e| !e.is_empty())
                    .map(|e| e.to_vec())
                    .collect()
            })
            .unwrap_or_default();
        let libs_joined = OsString::from_vec(libs.join(&b':'));
        if !libs.is_empty() {
            if inherited_app.as_deref() != Some(libs_joined.as_os_str()) {
                a.apply(l, &cs1("AGENTS_PYTHONPATH", libs_joined));
            }
        } else if inherited_app.is_some() {
            a.apply(l, &rm1("AGENTS_PYTHONPATH"));
        }
        let inherited_pp = get(&a, "PYTHONPATH").unwrap_or_default();
        let kept: Vec<&[u8]> = inherited_pp
            .as_bytes()
            .split(|c| *c == b':')
            .filter(|e| !e.is_empty() && !stale.iter().any(|s| s == e))
            .collect();
        let kept_joined = OsString::from_vec(kept.join(&b':'));
        let rev: Vec<Vec<u8>> = libs.iter().rev().cloned().collect();
        let pp = prepend_path(Some(&kept_joined), &rev).unwrap_or(kept_joined);
        if pp != inherited_pp {
            if !pp.is_empty() {
                a.apply(l, &cs1("PYTHONPATH", pp));
            } else if a.current().contains_key(OsStr::new("PYTHONPATH")) {
                a.apply(l, &rm1("PYTHONPATH"));
            }
        }

        // The two tiers.
        let global = s.global_scope();
        let mut bash: Option<Option<PathBuf>> = None;
        // Resolved once, before any file runs (as the reference does). Only
        // regular files (symlinks followed); a FIFO is never opened.
        let present: Vec<&EnvFile> = self
            .env_files
            .iter()
            .filter(|f| std::fs::metadata(paths::at(&f.path, &cwd)).is_ok_and(|m| m.is_file()))
            .collect();
        for f in present {
            let kind = if f.script {
                LayerKind::EnvScript
            } else {
                LayerKind::PlainFile
            };
            let l = a.add_layer(LayerInfo::new(kind).with_path(&f.path).with_level(&f.level));
            let started = std::time::Instant::now();
            if f.script {
                self.run_script(&mut a, l, f, global, &base);
            } else {
                let bash = bash.get_or_insert_with(|| {
                    let found = paths::which("bash", crate::core::get(&base, "PATH"), &cwd);
                    if found.is_none() {
                        crate::warn!("no usable bash found: plain env files are skipped");
                    }
                    found
                });
                match bash {
                    None => a.fail(l, "no usable bash found"),
                    Some(bash) => {
                        let bash = bash.clone();
                        self.run_plain(&mut a, l, f, &bash, &base);
                    }
                }
            }
            trace::layer(
                kind.as_str(),
                &f.level,
                &f.path,
                a.layers()[l].failure.as_deref(),
                started.elapsed(),
            );
        }

        // Proxy model.
        let l = a.add_layer(LayerInfo::new(LayerKind::Proxy));
        let px = identity::proxy(a.current());
        a.apply(l, &px);

        Session {
            prepared: self,
            assembly: a,
        }
    }

    fn run_script(&self, a: &mut Assembly, l: usize, f: &EnvFile, global: bool, base: &Env) {
        let cwd = &self.scope.cwd;
        let current = a.current();
        let interp = crate::core::get(current, "AGENTS_PYTHON")
            .filter(|p| !p.is_empty() && paths::at(Path::new(p), cwd).is_file())
            .map(PathBuf::from)
            .or_else(|| self.interpreter.clone());
        let mut env = spawn_env(current, base);
        env.insert("PYTHONIOENCODING".into(), "utf-8".into());
        let libs: Vec<Vec<u8>> = crate::core::get(current, "AGENTS_PYTHONPATH")
            .map(|v| {
                v.as_bytes()
                    .split(|c| *c == b':')
                    .filter(|e| !e.is_empty())
                    .map(|e| e.to_vec())
                    .collect()
            })
            .unwrap_or_default();
        if !libs.is_empty() {
            let rev: Vec<Vec<u8>> = libs.into_iter().rev().collect();
            if let Some(v) = prepend_path(crate::core::get(&env, "PYTHONPATH"), &rev) {
                env.insert("PYTHONPATH".into(), v);
            }
        }
        match script::run(
            interp.as_deref(),
            &f.path,
            &f.level,
            global,
            &env,
            self.timeout,
        ) {
            script::ScriptResult::Failed(why) => a.fail(l, why),
            script::ScriptResult::Changes(cs, skips) => {
                for s in skips {
                    a.skip(l, &s.key, s.reason, None);
                }
                a.apply(l, &cs);
            }
        }
    }

    fn run_plain(&self, a: &mut Assembly, l: usize, f: &EnvFile, bash: &Path, base: &Env) {
        let cwd = &self.scope.cwd;
        let full = paths::at(&f.path, cwd);
        let text = match crate::fsutil::read_input(&full, MAX_PLAIN_FILE) {
            Ok(text) => Some(text),
            Err(e) if crate::fsutil::input_error(&e).is_some() => {
                // Over the limit (or no longer a regular file): neither
                // read nor sourced, so memory stays bounded.
                let why = crate::process::io_kind(&e);
                crate::warn!("env file skipped: {}: {why}", f.path.display());
                a.fail(l, why);
                return;
            }
            Err(_) => None,
        };
        if let Some(text) = text {
            // The accumulated env, not the child's: the back-filled bootstrap
            // names are ones the evaluator always hands to bash, so the
            // outcome is the same without copying the environment per file.
            match native::evaluate(&text, a.current()) {
                native::Outcome::Applied(cs) => {
                    crate::debug!("{}: evaluated natively (no bash)", f.path.display());
                    a.apply(l, &cs);
                    return;
                }
                native::Outcome::Failed => {
                    crate::warn!("env file source failed: {}", f.path.display());
                    a.fail(l, "source failed");
                    return;
                }
                native::Outcome::Bash => {}
            }
        }
        crate::debug!("{}: sourced with bash", f.path.display());
        let env = spawn_env(a.current(), base);
        match shell::source(bash, &f.path, &env, self.timeout) {
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

    fn v(s: &[&str]) -> Vec<Vec<u8>> {
        s.iter().map(|x| x.as_bytes().to_vec()).collect()
    }

    #[test]
    fn prepend_path_rules() {
        let r = prepend_path(
            Some(OsStr::new(":/usr/bin:.:rel/dir::/h/bin:/bin:/usr/bin")),
            &v(&["/h/bin", "/p/bin"]),
        )
        .unwrap();
        assert_eq!(r, "/p/bin:/h/bin:/usr/bin:/bin:/usr/bin");
        assert_eq!(prepend_path(Some(OsStr::new("/a:/b")), &v(&["/a"])), None);
        assert_eq!(prepend_path(None, &v(&[])), None);
        assert_eq!(
            prepend_path(Some(OsStr::new("rel:/abs::")), &v(&[])).unwrap(),
            "/abs"
        );
    }

    #[test]
    fn launcher_and_pyvenv_shapes() {
        assert!(is_launcher_dir(b"/s/.pyvenv/3.11-posix-x86_64/overlays"));
        assert!(is_launcher_dir(b"/s/.pyvenv/x/overlays/"));
        assert!(!is_launcher_dir(b"/s/.pyvenv/overlays"));
        assert!(is_pyvenv_python(OsStr::new("/s/.pyvenv/t/bin/python")));
        assert!(!is_pyvenv_python(OsStr::new("/usr/bin/python3")));
    }
}
