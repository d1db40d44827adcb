//! Contract A: which stores a session walks, their overlays, and the
//! precedence walk with name specs (docs/session.md#the-walk-and-the-tiers).
//!
//! Not for: evaluating anything found by the walk (see `assemble`).

use super::paths::{self, abspath, expanduser, same_path};
use crate::core::Env;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The walk's level names; overlays may not use them.
pub const LEVEL_NAMES: &[&str] = &[
    "default",
    "overlay",
    "system",
    "user",
    "project",
    "project-root",
];

const DEVICE_NAMES: &[&str] = &[
    "con", "prn", "aux", "nul", "com1", "com2", "com3", "com4", "com5", "com6", "com7", "com8",
    "com9", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
];

/// Whether a directory name under `overlays/` is an overlay name.
pub fn is_valid_overlay_name(name: &[u8]) -> bool {
    let Ok(name) = std::str::from_utf8(name) else {
        return false;
    };
    let b = name.as_bytes();
    let shape = !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
    let lower = name.to_ascii_lowercase();
    let stem = lower.split('.').next().unwrap_or("");
    shape && !LEVEL_NAMES.contains(&lower.as_str()) && !DEVICE_NAMES.contains(&stem)
}

/// Lower-case, `_` and `.` → `-`.
pub fn normalize_overlay_name(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

/// `<NAME>_OVERLAY_ROOT`.
pub fn overlay_root_var(name: &str) -> String {
    let up: String = normalize_overlay_name(name)
        .to_ascii_uppercase()
        .chars()
        .map(|c| {
            if c.is_ascii_uppercase() || c.is_ascii_digit() {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{up}_OVERLAY_ROOT")
}

/// One overlay in play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    /// Its directory name (its level label in the walk).
    pub name: String,
    /// `<store>/overlays/<name>` (a symlink is not resolved).
    pub path: PathBuf,
    /// The store it was found in.
    pub store: PathBuf,
}

impl Overlay {
    pub fn normalized(&self) -> String {
        normalize_overlay_name(&self.name)
    }
    pub fn root_var(&self) -> String {
        overlay_root_var(&self.name)
    }
}

/// A store in the walk and its level name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Store {
    pub path: PathBuf,
    pub level: &'static str,
}

/// A name spec: a plain relative path, or a per-level mapping.
#[derive(Debug, Clone, Copy)]
pub enum NameSpec<'a> {
    Map(&'a [(&'a str, &'a str)]),
}

impl NameSpec<'_> {
    /// The template for a location with level `level`.
    fn template(&self, level: &str, is_overlay: bool) -> Option<String> {
        match self {
            NameSpec::Map(m) => {
                let get = |k: &str| m.iter().find(|(mk, _)| *mk == k).map(|(_, v)| *v);
                let mut default = get("default");
                if is_overlay {
                    if let Some(o) = get("overlay") {
                        default = Some(o);
                    }
                }
                let t = get(level).or(default)?;
                (!t.is_empty()).then(|| t.to_string())
            }
        }
    }
}

/// Which kind of location a walk entry is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocationKind {
    Overlay,
    Store,
    ProjectRoot,
}

/// One entry of the walk: `(level, path, overlay root)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    pub level: String,
    pub path: PathBuf,
    pub overlay_root: Option<PathBuf>,
    pub kind: LocationKind,
}

/// The scope `env` walks, with every root absolute (as dotagents makes them).
#[derive(Debug, Clone)]
pub struct Scope {
    /// `"user"` or `"project"` (after the collapse rule).
    pub level: &'static str,
    /// The scope's own store.
    pub agents_root: PathBuf,
    pub user_root: PathBuf,
    pub project_root: Option<PathBuf>,
    pub system_root: Option<PathBuf>,
    /// The cwd every relative path was resolved against.
    pub cwd: PathBuf,
    /// Deduplicated, in precedence order.
    pub stores: Vec<Store>,
    /// After shadowing, walk order.
    pub overlays: Vec<Overlay>,
    /// Why the user store is not walked (owned by another user, or refused
    /// by the trust gate); `user_root` still names it.
    pub user_refused: Option<String>,
}

fn env_nonempty<'a>(env: &'a Env, k: &str) -> Option<&'a OsStr> {
    crate::core::get(env, k).filter(|v| !v.is_empty())
}

/// Why a system store candidate is not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemSkip {
    /// `$AGENTS_SYSTEM_ROOT` is not absolute (after `~` expansion).
    NotAbsolute,
    /// The candidate could not be stat'ed (the error kind).
    CannotStat(String),
    NotOwnedByRoot,
    Writable,
}

/// The system store candidate and what the rule (docs/session.md#stores: only when
/// administrators alone can write it) says of it: the one decision `env` and
/// `status` share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemStore {
    /// Used.
    Present(PathBuf),
    /// Not there (or not a directory): nothing to say.
    Absent(PathBuf),
    /// There, but refused.
    Skipped(Option<PathBuf>, SystemSkip),
}

impl SystemStore {
    /// Decide from the base env: `$AGENTS_SYSTEM_ROOT` (`~` expanded),
    /// else `/etc/agents`; used only when a root-owned directory that
    /// neither group nor others can write.
    pub fn decide(env: &Env) -> SystemStore {
        let home = crate::core::get(env, "HOME");
        let cand = match env_nonempty(env, "AGENTS_SYSTEM_ROOT") {
            Some(v) => match expanduser(v, home) {
                Ok(p) if p.is_absolute() => p,
                _ => return SystemStore::Skipped(None, SystemSkip::NotAbsolute),
            },
            None => PathBuf::from("/etc/agents"),
        };
        if !cand.is_dir() {
            return SystemStore::Absent(cand);
        }
        match std::fs::metadata(&cand) {
            Err(e) => SystemStore::Skipped(
                Some(cand),
                SystemSkip::CannotStat(crate::fsutil::io_kind(&e)),
            ),
            Ok(m) if m.uid() != 0 => SystemStore::Skipped(Some(cand), SystemSkip::NotOwnedByRoot),
            Ok(m) if m.mode() & 0o022 != 0 => {
                SystemStore::Skipped(Some(cand), SystemSkip::Writable)
            }
            Ok(_) => SystemStore::Present(cand),
        }
    }

    /// The candidate's path (none when the variable was unusable).
    pub fn path(&self) -> Option<&Path> {
        match self {
            SystemStore::Present(p) | SystemStore::Absent(p) => Some(p),
            SystemStore::Skipped(p, _) => p.as_deref(),
        }
    }

    /// Why it is skipped, as `status` says it.
    pub fn why(&self) -> Option<String> {
        match self {
            SystemStore::Skipped(_, why) => Some(match why {
                SystemSkip::NotAbsolute => "$AGENTS_SYSTEM_ROOT is not an absolute path".into(),
                SystemSkip::CannotStat(k) => format!("cannot stat it ({k})"),
                SystemSkip::NotOwnedByRoot => "not owned by root".into(),
                SystemSkip::Writable => "group- or world-writable".into(),
            }),
            _ => None,
        }
    }

    /// The warning `env` gives for a skipped store.
    fn warning(&self) -> Option<String> {
        let SystemStore::Skipped(p, why) = self else {
            return None;
        };
        let d = p
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        Some(match why {
            // The reference repeats the value here; we name the variable only.
            SystemSkip::NotAbsolute => "ignoring $AGENTS_SYSTEM_ROOT: not an absolute path".into(),
            SystemSkip::CannotStat(k) => {
                format!("ignoring the system store {d}: cannot stat it ({k})")
            }
            SystemSkip::NotOwnedByRoot => {
                format!("ignoring the system store {d}: it is not owned by root")
            }
            SystemSkip::Writable => {
                format!("ignoring the system store {d}: it is group- or world-writable")
            }
        })
    }
}

/// The system store by the trust rule ([`SystemStore::decide`]); why a
/// candidate was refused goes to `warnings`.
pub fn system_root(env: &Env, warnings: &mut Vec<String>) -> Option<PathBuf> {
    let s = SystemStore::decide(env);
    warnings.extend(s.warning());
    match s {
        SystemStore::Present(p) => Some(p),
        _ => None,
    }
}

/// The user store: `--agents-dir` → `$AGENTS_HOME` → `~/.agents`.
pub fn user_store(agents_dir: Option<&Path>, env: &Env) -> Result<PathBuf, String> {
    let home = crate::core::get(env, "HOME");
    if let Some(d) = agents_dir {
        return expanduser(d.as_os_str(), home);
    }
    if let Some(v) = env_nonempty(env, "AGENTS_HOME") {
        return expanduser(v, home);
    }
    let h = expanduser(OsStr::new("~"), home)?;
    Ok(h.join(".agents"))
}

/// Why the user store at `p` is not used: it exists and is owned by
/// neither the effective user nor root (root with another user's HOME, as
/// `sudo -E` leaves it, would run that user's code as root).
fn foreign_user_store(p: &Path) -> Option<String> {
    let m = std::fs::metadata(p).ok()?;
    let euid = rustix::process::geteuid().as_raw();
    (m.uid() != euid && m.uid() != 0).then(|| {
        format!(
            "ignoring the user store {}: it is owned by another user (uid {}); run agentenv as that user",
            p.display(),
            m.uid()
        )
    })
}

/// Which variable decides the project root (`None`: the cwd) — the one
/// rule `env` applies and `status` names.
pub fn project_root_source(env: &Env) -> Option<&'static str> {
    ["AGENTS_PROJECT_ROOT", "CLAUDE_PROJECT_DIR"]
        .into_iter()
        .find(|k| env_nonempty(env, k).is_some())
}

/// The project root: `$AGENTS_PROJECT_ROOT` → `$CLAUDE_PROJECT_DIR` → cwd.
pub fn project_root_default(env: &Env, cwd: &Path) -> Result<PathBuf, String> {
    let home = crate::core::get(env, "HOME");
    match project_root_source(env).and_then(|k| env_nonempty(env, k)) {
        Some(v) => expanduser(v, home),
        None => Ok(cwd.to_path_buf()),
    }
}

/// Discover one store's overlays, sorted by name; a warning (once) about
/// same-store duplicates of one normalised name.
fn discover(store: &Path, warned: &mut Vec<String>) -> Vec<Overlay> {
    let root = store.join("overlays");
    let Ok(rd) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut names: Vec<OsString> = rd.filter_map(|e| e.ok().map(|e| e.file_name())).collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let mut found = Vec::new();
    for n in names {
        if !is_valid_overlay_name(n.as_bytes()) {
            continue;
        }
        let path = root.join(&n);
        if !path.is_dir() {
            continue;
        }
        found.push(Overlay {
            name: n.to_string_lossy().into_owned(),
            path,
            store: store.to_path_buf(),
        });
    }
    duplicates(&found, &root, warned);
    found
}

/// Warn (once per pair) about overlays of one store whose names normalize
/// to the same name. Keyed by the normalized name: linear in the overlays
/// (a list scan made 20,000 overlays quadratic).
fn duplicates(found: &[Overlay], root: &Path, warned: &mut Vec<String>) {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    let mut said: std::collections::HashSet<String> = warned.iter().cloned().collect();
    for o in found {
        let norm = o.normalized();
        match seen.get(&norm) {
            Some(first) if *first != o.name => {
                let msg = format!(
                    "overlays {} and {} in {} are one overlay ({}) and share {}; remove one",
                    first,
                    o.name,
                    root.display(),
                    norm,
                    o.root_var()
                );
                if said.insert(msg.clone()) {
                    warned.push(msg);
                }
            }
            Some(_) => {}
            None => {
                seen.insert(norm, &o.name);
            }
        }
    }
}

/// The overlays of every store, in store order, without those shadowed by
/// one of the same normalized name in a later store. The stores are walked
/// from the last with a set of the names seen so far (linear, not a scan
/// per overlay).
fn unshadowed(per_store: Vec<Vec<Overlay>>) -> Vec<Overlay> {
    let mut later: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut kept: Vec<Vec<Overlay>> = Vec::with_capacity(per_store.len());
    for found in per_store.into_iter().rev() {
        let names: Vec<String> = found.iter().map(Overlay::normalized).collect();
        kept.push(
            found
                .into_iter()
                .zip(&names)
                .filter(|(_, n)| !later.contains(*n))
                .map(|(o, _)| o)
                .collect(),
        );
        later.extend(names);
    }
    kept.into_iter().rev().flatten().collect()
}

impl Scope {
    /// Resolve the scope from the flags, the base env and the cwd; what
    /// was ignored on the way (a refused system store, duplicate overlays)
    /// goes to `warnings`, in order.
    pub fn resolve(
        input: &super::Options,
        env: &Env,
        cwd: &Path,
        warnings: &mut Vec<String>,
    ) -> Result<Scope, super::Error> {
        // `expanduser`'s one failure: no home directory for `~`.
        let user =
            user_store(input.agents_dir.as_deref(), env).map_err(|_| super::Error::NoHome)?;
        let project_root = match &input.project_root {
            Some(p) => p.clone(),
            None => project_root_default(env, cwd).map_err(|_| super::Error::NoHome)?,
        };
        let system = system_root(env, warnings);
        // A store named explicitly that is not there is most likely a typo
        // (`AGENTS_HOME=~/.agent`): say so. The default `~/.agents` (also
        // as an inherited $AGENTS_HOME) may well not exist yet.
        let named = if input.agents_dir.is_some() {
            Some("--agents-dir")
        } else {
            let default = env_nonempty(env, "HOME").map(|h| Path::new(h).join(".agents"));
            env_nonempty(env, "AGENTS_HOME")
                .filter(|_| default.as_deref() != Some(user.as_path()))
                .map(|_| "$AGENTS_HOME")
        };
        if let Some(by) = named {
            let at = abspath(&user, cwd);
            if std::fs::symlink_metadata(&at).is_err() {
                warnings.push(format!(
                    "the user store {} (named by {by}) does not exist; nothing is loaded from it",
                    at.display()
                ));
            }
        }
        let user_refused = input
            .user_store_refused
            .clone()
            .or_else(|| foreign_user_store(&abspath(&user, cwd)));
        warnings.extend(user_refused.clone());
        let (mut level, mut agents_root, mut proj) = if input.global {
            ("user", user.clone(), None)
        } else {
            let store = input
                .project_store
                .clone()
                .unwrap_or_else(|| project_root.join(".agents"));
            ("project", store, Some(project_root))
        };
        if level == "project" && user_refused.is_none() && same_path(&agents_root, &user, cwd) {
            level = "user";
            agents_root = user.clone();
        }
        let mut user_root = user;
        let mut system_root = system;
        // As dotagents: if any root is relative, every root goes through
        // abspath.
        let any_rel = !agents_root.is_absolute()
            || !user_root.is_absolute()
            || proj.as_ref().is_some_and(|p| !p.is_absolute())
            || system_root.as_ref().is_some_and(|p| !p.is_absolute());
        if any_rel {
            agents_root = abspath(&agents_root, cwd);
            user_root = abspath(&user_root, cwd);
            proj = proj.map(|p| abspath(&p, cwd));
            system_root = system_root.map(|p| abspath(&p, cwd));
        }
        let mut cands: Vec<PathBuf> = system_root.iter().cloned().collect();
        if user_refused.is_none() {
            cands.push(user_root.clone());
        }
        if level == "project" {
            cands.push(agents_root.clone());
        }
        let mut stores: Vec<Store> = Vec::new();
        for c in cands {
            if stores.iter().any(|s| same_path(&s.path, &c, cwd)) {
                continue;
            }
            let lvl = if system_root.as_deref() == Some(c.as_path()) {
                "system"
            } else if c == user_root {
                "user"
            } else {
                "project"
            };
            stores.push(Store {
                path: c,
                level: lvl,
            });
        }
        let mut warned = Vec::new();
        let per_store: Vec<Vec<Overlay>> = stores
            .iter()
            .map(|s| discover(&s.path, &mut warned))
            .collect();
        warnings.extend(warned);
        let overlays = unshadowed(per_store);
        Ok(Scope {
            level,
            agents_root,
            user_root,
            project_root: proj,
            system_root,
            cwd: cwd.to_path_buf(),
            stores,
            overlays,
            user_refused,
        })
    }

    /// A user scope (`-g`, or the collapse case): env.py gets `--global`.
    pub fn global_scope(&self) -> bool {
        self.level == "user"
    }

    /// The precedence walk (docs/session.md#the-walk-and-the-tiers).
    pub fn walk(&self, specs: &[NameSpec<'_>], include_missing: bool) -> Vec<WalkEntry> {
        let mut out = Vec::new();
        let mut add = |loc: &Path, level: &str, kind: LocationKind| {
            for spec in specs {
                let Some(t) = spec.template(level, kind == LocationKind::Overlay) else {
                    continue;
                };
                out.push(WalkEntry {
                    level: level.to_string(),
                    path: loc.join(t),
                    overlay_root: (kind == LocationKind::Overlay).then(|| loc.to_path_buf()),
                    kind: kind.clone(),
                });
            }
        };
        for store in &self.stores {
            for o in self.overlays.iter().filter(|o| o.store == store.path) {
                add(&o.path, &o.name, LocationKind::Overlay);
            }
            add(&store.path, store.level, LocationKind::Store);
        }
        if let Some(p) = &self.project_root {
            add(p, "project-root", LocationKind::ProjectRoot);
        }
        if include_missing {
            return out;
        }
        out.into_iter()
            .filter(|e| paths::at(&e.path, &self.cwd).exists())
            .collect()
    }
}

/// `{"default": "bin", "project-root": ""}`.
pub const BIN: &[NameSpec<'static>] = &[NameSpec::Map(&[("default", "bin"), ("project-root", "")])];
/// `{"default": "lib", "project-root": ""}`.
pub const LIB: &[NameSpec<'static>] = &[NameSpec::Map(&[("default", "lib"), ("project-root", "")])];
/// The pre tier.
pub const PRE_TIER: &[NameSpec<'static>] = &[
    NameSpec::Map(&[("default", "pre.env.py"), ("project-root", "")]),
    NameSpec::Map(&[("default", "pre.env"), ("project-root", "")]),
    NameSpec::Map(&[("project", "pre.local.env")]),
];
/// The main tier.
pub const MAIN_TIER: &[NameSpec<'static>] = &[
    NameSpec::Map(&[("default", "env.py"), ("project-root", "")]),
    NameSpec::Map(&[("default", "env"), ("project-root", "")]),
    NameSpec::Map(&[("project", "local.env")]),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(store: &str, names: impl Iterator<Item = String>) -> Vec<Overlay> {
        names
            .map(|name| Overlay {
                path: Path::new(store).join("overlays").join(&name),
                store: PathBuf::from(store),
                name,
            })
            .collect()
    }

    /// #13 (issue 22): both checks are linear. 200,000 overlays per store:
    /// the list scans they replace needed about 2 × 10^10 comparisons each
    /// (minutes in a debug build); hash sets do it in one pass.
    #[test]
    fn duplicate_and_shadow_checks_are_linear_in_the_overlays() {
        let n = 200_000;
        let mut user = synthetic("/h/.agents", (0..n).map(|i| format!("o{i}")));
        user.extend(synthetic(
            "/h/.agents",
            ["dup-a", "dup_a"].map(String::from).into_iter(),
        ));
        let mut warned = vec!["earlier".to_string()];
        duplicates(&user, Path::new("/h/.agents/overlays"), &mut warned);
        duplicates(&user, Path::new("/h/.agents/overlays"), &mut warned);
        assert_eq!(warned.len(), 2, "{warned:?}");
        assert!(warned[1].starts_with("overlays dup-a and dup_a in /h/.agents/overlays"));
        let proj = synthetic(
            "/p/.agents",
            (0..n).filter(|i| i % 2 == 0).map(|i| format!("O{i}")),
        );
        let all = unshadowed(vec![user, proj]);
        // The user store keeps its odd ones and the pair; the project's
        // even ones shadow the rest (names compare normalized: O2 = o2).
        assert_eq!(all.len(), n / 2 + 2 + n / 2);
        assert_eq!(all[0].name, "o1");
        assert_eq!(all[n / 2].name, "dup-a");
        assert_eq!(all.last().unwrap().store, Path::new("/p/.agents"));
    }

    #[test]
    fn overlay_names() {
        for ok in ["a.b-c_d", "Z9", "v1.2", "My_Tool", "x"] {
            assert!(is_valid_overlay_name(ok.as_bytes()), "{ok}");
        }
        for bad in [
            ".git",
            "__pycache__",
            "2fast",
            "trail-",
            "user",
            "Project-Root",
            "con",
            "nul.txt",
            "",
            "a b",
            "DEFAULT",
            "COM1.x",
            "é",
        ] {
            assert!(!is_valid_overlay_name(bad.as_bytes()), "{bad}");
        }
        assert_eq!(overlay_root_var("my-overlay"), "MY_OVERLAY_OVERLAY_ROOT");
        assert_eq!(overlay_root_var("v1.2"), "V1_2_OVERLAY_ROOT");
        assert_eq!(overlay_root_var("Py_Lib"), "PY_LIB_OVERLAY_ROOT");
        assert_eq!(overlay_root_var("a.b-c_d"), "A_B_C_D_OVERLAY_ROOT");
        assert_eq!(normalize_overlay_name("My_Tool"), "my-tool");
    }

    use crate::core::env_of as env;

    /// The scope of `cwd` with no flags.
    fn resolved(e: &Env, cwd: &Path) -> Scope {
        Scope::resolve(&crate::session::Options::default(), e, cwd, &mut Vec::new()).unwrap()
    }

    #[test]
    fn walk_order_and_shadowing() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        for p in [
            "home/.agents/overlays/bb",
            "home/.agents/overlays/aa",
            "home/.agents/overlays/pp",
            "home/.agents/overlays/.git",
            "proj/.agents/overlays/PP",
        ] {
            std::fs::create_dir_all(w.join(p)).unwrap();
        }
        let e = env(&[
            ("HOME", w.join("home").to_str().unwrap()),
            ("AGENTS_SYSTEM_ROOT", w.join("no-system").to_str().unwrap()),
        ]);
        let s = resolved(&e, &w.join("proj"));
        let names: Vec<_> = s.overlays.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, vec!["aa", "bb", "PP"]);
        let levels: Vec<_> = s.walk(BIN, true).into_iter().map(|e| e.level).collect();
        assert_eq!(levels, vec!["aa", "bb", "user", "PP", "project"]);
        let main: Vec<_> = s
            .walk(MAIN_TIER, true)
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(main.len(), 11);
        assert_eq!(main[10], w.join("proj/.agents/local.env"));
    }

    #[test]
    fn collapse_when_project_store_is_user_store() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path();
        std::fs::create_dir_all(w.join("home/.agents")).unwrap();
        let e = env(&[
            ("HOME", w.join("home").to_str().unwrap()),
            ("AGENTS_SYSTEM_ROOT", "/nonexistent-x"),
        ]);
        let s = resolved(&e, &w.join("home"));
        assert_eq!(s.level, "user");
        assert_eq!(s.project_root.as_deref(), Some(w.join("home").as_path()));
        assert_eq!(s.stores.len(), 1);
    }
}
