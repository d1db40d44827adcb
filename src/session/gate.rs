//! The trust gate's one decision for a project root, shared by the shell
//! hook, `env`/`exec`/`explain --require-trust` and `status` (so they can
//! never disagree about a store): is the root's `.agents` allowed, and if
//! so, load it by its real paths from the bytes the digest read.
//!
//! - A `.agents` that is a symbolic link owned by another user (neither the
//!   effective user nor root) is refused: it would borrow the trust of the
//!   store it points to, and its owner could re-point it.
//! - An allowed store is loaded by its real path and the root's real path
//!   (PATH, `AGENTS_PROJECT_ROOT`, the watch list), never through a link
//!   that can be re-pointed; its env files run from the digest's
//!   [`Snapshot`], so a file swapped after the check never runs.
//! - While the gate is on, a user store that is not an absolute path
//!   (`HOME=.`), or that is the refused project store itself, is not
//!   loaded either.

use super::Options;
use crate::core::{Env, Note};
use crate::session::trust::{Bounds, Snapshot, TrustError, TrustState};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a project store does not load.
#[derive(Debug, Clone)]
pub enum Refusal {
    NotAllowed,
    Changed,
    /// Not digested or not readable (the error names the path).
    Error(TrustError),
}

impl Refusal {
    /// The phrase after the store's path in a warning.
    pub fn describe(&self) -> String {
        match self {
            Refusal::NotAllowed => "is not allowed".into(),
            Refusal::Changed => "changed since it was allowed".into(),
            Refusal::Error(e) => format!("is not loaded ({e})"),
        }
    }

    /// `status`'s trust column.
    pub fn trust(&self) -> String {
        match self {
            Refusal::NotAllowed => TrustState::NotAllowed.as_str().into(),
            Refusal::Changed => TrustState::Changed.as_str().into(),
            Refusal::Error(e) => format!("unknown ({e})"),
        }
    }
}

/// The decision for one project root.
#[derive(Debug, Clone)]
pub struct Decision {
    /// The root as found (lexically).
    pub root: PathBuf,
    /// `root/.agents`.
    pub store: PathBuf,
    pub verdict: Result<Allowed, Refusal>,
}

/// An allowed store: the real root and what the digest read.
#[derive(Debug, Clone)]
pub struct Allowed {
    pub real_root: PathBuf,
    pub snapshot: Arc<Snapshot>,
}

/// Whether `p` is a symbolic link owned by neither the effective user nor
/// root.
pub fn foreign_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| {
        let euid = rustix::process::geteuid().as_raw();
        m.file_type().is_symlink() && m.uid() != euid && m.uid() != 0
    })
}

/// `agentenv allow`: record the digest of `store` under the trust state
/// dir `state`, unless it is a foreign symbolic link; returns its real
/// path.
pub fn allow(state: &Path, store: &Path, bounds: Bounds) -> Result<PathBuf, TrustError> {
    if foreign_link(store) {
        return Err(TrustError::ForeignLink(store.to_path_buf()));
    }
    crate::session::trust::allow(state, store, bounds)
}

/// A project store's trust taken before `agentenv set` edits one of its
/// files: an allowed, unchanged store stays allowed after the user's own
/// edit ([`Edit::allow_again`]); any other state is only reported.
#[derive(Debug, Clone)]
pub struct Edit {
    state: PathBuf,
    /// The store's trust before the edit.
    pub before: TrustState,
}

/// The trust of `store` now (`None`: it cannot be told — no state dir, an
/// unreadable store).
pub fn before_edit(store: &Path, base: &Env) -> Option<Edit> {
    let state = crate::session::trust::state_dir(base).ok()?;
    let (before, _) = crate::session::trust::check(&state, store, Bounds::from_env(base)).ok()?;
    Some(Edit { state, before })
}

impl Edit {
    /// Record the edited store's new digest (only when it was allowed).
    pub fn allow_again(&self, store: &Path, base: &Env) -> Result<PathBuf, TrustError> {
        crate::session::trust::allow(&self.state, store, Bounds::from_env(base))
    }
}

/// Decide for the project `root` (its `.agents`), with the trust state of
/// `base` and the digest within `bounds`.
pub fn decide(root: &Path, base: &Env, bounds: Bounds) -> Decision {
    let store = root.join(".agents");
    let verdict = if foreign_link(&store) {
        Err(Refusal::Error(TrustError::ForeignLink(store.clone())))
    } else {
        match crate::session::trust::state_dir(base)
            .and_then(|s| crate::session::trust::check(&s, &store, bounds))
        {
            Ok((TrustState::Allowed, Some(snap))) => Ok(Allowed {
                real_root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
                snapshot: Arc::new(snap),
            }),
            Ok((TrustState::Changed, _)) => Err(Refusal::Changed),
            Ok(_) => Err(Refusal::NotAllowed),
            Err(e) => Err(Refusal::Error(e)),
        }
    };
    Decision {
        root: root.to_path_buf(),
        store,
        verdict,
    }
}

impl Decision {
    /// The refusal's warning: `STORE why; run 'agentenv allow' to load it`
    /// (`None` when allowed).
    pub fn warning(&self) -> Option<String> {
        let r = self.verdict.as_ref().err()?;
        Some(format!(
            "{} {}; run 'agentenv allow' to load it",
            self.store.display(),
            r.describe()
        ))
    }

    /// `status`'s trust column.
    pub fn trust(&self) -> String {
        match &self.verdict {
            Ok(_) => TrustState::Allowed.as_str().into(),
            Err(r) => r.trust(),
        }
    }

    /// Set `opts` for this decision: the allowed store by its real paths
    /// and snapshot, or no project (and not the refused store as the user
    /// store either).
    pub fn apply(&self, opts: &mut Options, base: &Env) {
        match &self.verdict {
            Ok(a) => {
                opts.project_root = Some(a.real_root.clone());
                opts.project_store = Some(a.snapshot.store.clone());
                opts.pinned = Some(a.snapshot.clone());
            }
            Err(_) => {
                opts.global = true;
                if opts.user_store_refused.is_none() {
                    opts.user_store_refused = user_store_rule(opts, base, Some(&self.store));
                }
            }
        }
    }
}

/// The digest's bounds for a session with `opts`: its timeout
/// (`--timeout`, else `$AGENTS_ENV_TIMEOUT`, else 30 s).
pub fn bounds(opts: &Options, base: &Env) -> Bounds {
    match opts.timeout {
        Some(t) => Bounds::within(t),
        None => Bounds::from_env(base),
    }
}

/// Under the gate: why the user store is not loaded (`None`: it is). It
/// is not when its location is relative (`HOME=.`: it would be whatever
/// `.agents` the cwd holds), or when it is `refused`, the project store the
/// gate did not allow.
pub fn user_store_rule(opts: &Options, base: &Env, refused: Option<&Path>) -> Option<String> {
    let user = super::scope::user_store(opts.agents_dir.as_deref(), base).ok()?;
    if !user.is_absolute() {
        return Some(format!(
            "ignoring the user store {}: not an absolute path ($HOME or $AGENTS_HOME is relative) while the trust gate is on",
            user.display()
        ));
    }
    let refused = refused?;
    let (Ok(a), Ok(b)) = (std::fs::canonicalize(&user), std::fs::canonicalize(refused)) else {
        return None;
    };
    (a == b).then(|| {
        format!(
            "ignoring the user store {}: it is the project store that is not loaded",
            user.display()
        )
    })
}

/// Whether the gate is on: `--require-trust`, or
/// `AGENTENV_REQUIRE_TRUST` set to anything but empty or `0`.
pub fn required(flag: bool, base: &Env) -> bool {
    flag || crate::core::get(base, "AGENTENV_REQUIRE_TRUST")
        .is_some_and(|v| !v.is_empty() && v != "0")
}

/// The gate of `env`/`exec`/`explain --require-trust` (and `status`) on
/// the reference's project root: when the scope's project store is not
/// allowed (or changed), a warning and the other stores only (as `-g`);
/// when it is, the store from its real paths and the bytes digested.
/// Returns the decision, if one was made (none under `-g`, for a project
/// store that is the user store, or for one that does not exist).
pub fn on_reference_root(
    opts: &mut Options,
    base: &Env,
    notes: &mut Vec<Note>,
) -> Option<Decision> {
    if opts.global {
        return None;
    }
    let cwd = match &opts.cwd {
        Some(c) => c.clone(),
        None => std::env::current_dir().ok()?,
    };
    // A relative user store is not loaded while the gate is on.
    opts.user_store_refused = user_store_rule(opts, base, None);
    let input = Options {
        project_store: None,
        ..opts.clone()
    };
    // Its warnings are the session's own; `prepare` records them.
    let scope = super::scope::Scope::resolve(&input, base, &cwd, &mut Vec::new()).ok()?;
    if scope.level != "project" || !scope.agents_root.is_dir() {
        return None; // the user store (collapse rule), or nothing to run
    }
    let root = scope.project_root.clone()?;
    let d = decide(&root, base, bounds(opts, base));
    if let Some(w) = d.warning() {
        notes.push(Note::warning(format!(
            "{w} (walking the other stores only)"
        )));
    }
    d.apply(opts, base);
    Some(d)
}

/// The shell hook's gate: the project root is the nearest directory
/// upwards from the cwd holding `.agents` (not above `$HOME`), and its
/// store loads only when allowed; outside a project, no project. The
/// caller says the refusal (once per root).
pub fn on_walk_up(opts: &mut Options, base: &Env, cwd: &Path) -> Option<Decision> {
    let home = crate::core::get(base, "HOME").map(PathBuf::from);
    let root = crate::session::trust::find_project_root(cwd, home.as_deref());
    // The hook is the trust gate: a relative user store is not loaded.
    opts.user_store_refused = user_store_rule(opts, base, None);
    match root {
        Some(r) => {
            let d = decide(&r, base, bounds(opts, base));
            d.apply(opts, base);
            Some(d)
        }
        None => {
            opts.global = true;
            None
        }
    }
}
