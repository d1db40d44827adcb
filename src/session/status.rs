//! What `agentenv status` shows, built from a [`Plan`] with the rules the
//! plan itself used (the system store's [`SystemStore::decide`], the
//! project root's [`scope::project_root_source`], the gate's
//! [`gate::decide`], the cache key): what `agentenv env` would walk from
//! the plan's directory, and whether `--cache` would hit.
//!
//! Nothing is run: no `env.py`, no bash. Files are only stat'ed, and read
//! where `env` itself would read them before running anything (the trust
//! digest, the cache key's signatures, a plain file's text to tell whether
//! it is evaluated natively). Names and paths only: no value.

use super::plan::Plan;
use super::scope::{self, SystemStore};
use super::{cache, gate, native, paths, Error, Prepared, Tier};
use crate::core::Note;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The data of `agentenv status`; its JSON form is this, field by field.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub directory: String,
    pub project_root: Option<String>,
    /// What chose the project root (the reference's rule).
    pub project_root_rule: &'static str,
    /// The shell hook's root (nearest `.agents` upwards, below `$HOME`).
    pub hook_root: Option<String>,
    pub hook_root_trust: Option<String>,
    /// `user` or `project`.
    pub scope: &'static str,
    pub interpreter: Option<String>,
    pub stores: Vec<StoreRow>,
    pub overlays: Vec<OverlayRow>,
    /// Every env-file candidate, in walk order.
    pub files: Vec<FileRow>,
    pub bin: Vec<DirRow>,
    pub lib: Vec<DirRow>,
    pub cache: CacheRow,
    /// The secret references each store and overlay declares and the backend a load
    /// would contact for each (none for a project store not allowed).
    pub references: Vec<RefRow>,
    /// What working it out had to say (the scope's warnings when walked
    /// without the gate), for the caller to print.
    #[serde(skip)]
    pub notes: Vec<Note>,
}

/// One store: present, absent or skipped (and why), and its trust.
#[derive(Debug, Clone, Serialize)]
pub struct StoreRow {
    pub level: &'static str,
    pub path: Option<String>,
    pub state: &'static str,
    pub why: Option<String>,
    pub trust: String,
}

/// One secret reference: its store, the backend, whether a load
/// contacts it.
#[derive(Debug, Clone, Serialize)]
pub struct RefRow {
    pub name: String,
    pub level: &'static str,
    pub reference: String,
    /// The `agentenv.toml` (the store's or an overlay's) and its line.
    pub file: String,
    pub line: u32,
    pub backend: String,
    pub contacted: bool,
    pub why: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct OverlayRow {
    pub name: String,
    pub path: String,
    pub store: String,
}

/// One env-file candidate.
#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    /// `pre` or `main`.
    pub tier: &'static str,
    pub level: String,
    pub path: String,
    /// `env.py` or `plain`.
    pub kind: &'static str,
    pub exists: bool,
    /// A plain file that exists: `native`, `bash` or `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluated: Option<&'static str>,
}

/// A `bin` or `lib` candidate.
#[derive(Debug, Clone, Serialize)]
pub struct DirRow {
    pub path: String,
    pub exists: bool,
}

/// The cache directory, whether `--cache` may use it, and the lookups of
/// the invocations people run (without storing).
#[derive(Debug, Clone, Serialize)]
pub struct CacheRow {
    pub dir: String,
    pub usable: bool,
    pub why: Option<String>,
    pub lookups: Vec<Lookup>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Lookup {
    pub invocation: String,
    pub hit: bool,
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn presence(p: &Path) -> (&'static str, Option<String>) {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => ("present", None),
        Ok(_) => ("absent", Some("not a directory".into())),
        Err(_) => ("absent", None),
    }
}

impl Plan {
    /// What `status` shows for this plan; `auto` is the format `auto`
    /// resolves to on this host (the cache lookups use it). When the gate
    /// skipped the project store, the scope is also worked out without the
    /// gate, to name the root and the store it skipped.
    pub fn status(&self, auto: &str) -> Result<Status, Error> {
        let base = self.base();
        let prepared = self.prepared();
        let requested = self.requested();
        let skipped_by_gate = self.gated_out();
        let mut notes = Vec::new();
        let ungated = if skipped_by_gate {
            let mut p = super::prepare(requested, base)?;
            notes.append(&mut p.notes);
            Some(p)
        } else {
            None
        };
        let root_scope = &ungated.as_ref().unwrap_or(prepared).scope;
        let scope = &prepared.scope;
        let rule = if requested.global {
            "-g: no project"
        } else {
            match scope::project_root_source(base) {
                Some("AGENTS_PROJECT_ROOT") => "$AGENTS_PROJECT_ROOT",
                Some(_) => "$CLAUDE_PROJECT_DIR",
                None => {
                    "the directory (neither $AGENTS_PROJECT_ROOT nor $CLAUDE_PROJECT_DIR is set)"
                }
            }
        };
        let home = crate::core::get(base, "HOME").map(PathBuf::from);
        let hook_root = crate::session::trust::find_project_root(&scope.cwd, home.as_deref());
        let mut trust = TrustOf {
            plan: self,
            decided: self.decision().into_iter().cloned().collect(),
        };
        // What the shell hook would decide for its root's store.
        let hook_trust = hook_root.as_deref().map(|r| trust.of(r));
        let stores = self.store_rows(root_scope, skipped_by_gate, &mut trust);
        let references = self.reference_rows(&stores, &mut notes);
        Ok(Status {
            directory: s(&scope.cwd),
            project_root: root_scope.project_root.as_deref().map(s),
            project_root_rule: rule,
            hook_root: hook_root.as_deref().map(s),
            hook_root_trust: hook_trust,
            scope: scope.level,
            interpreter: prepared.interpreter.as_deref().map(s),
            stores,
            overlays: scope
                .overlays
                .iter()
                .map(|o| OverlayRow {
                    name: o.name.clone(),
                    path: s(&o.path),
                    store: s(&o.store),
                })
                .collect(),
            files: self.file_rows(),
            bin: dir_rows(&prepared.bin_paths, &scope.cwd),
            lib: dir_rows(&prepared.lib_candidates, &scope.cwd),
            cache: self.cache_row(auto),
            references,
            notes,
        })
    }

    /// The references of each loaded store and of its overlays (in the
    /// order a load applies them), with the file and line that declare
    /// each and the backend each would contact (as the caller's
    /// environment names it: the stores' own files are not run here).
    fn reference_rows(&self, stores: &[StoreRow], notes: &mut Vec<Note>) -> Vec<RefRow> {
        let scope = &self.prepared().scope;
        let mut rows = Vec::new();
        for st in &scope.stores {
            let allowed = st.level != "project"
                || self.prepared().pinned.is_some()
                || stores.iter().any(|r| {
                    r.level == "project"
                        && r.trust == crate::session::trust::TrustState::Allowed.as_str()
                });
            let store = super::paths::at(&st.path, &scope.cwd);
            let ctx = crate::refs::Ctx {
                env: self.base(),
                store: &store,
                cwd: &scope.cwd,
                timeout: crate::refs::DEFAULT_TIMEOUT,
            };
            let first = rows.len();
            let overlays = scope.overlays.iter().filter(|o| o.store == st.path);
            let dirs = overlays.map(|o| &o.path).chain([&st.path]);
            for dir in dirs {
                let Some(d) = super::sensitive::Declarations::load(dir, &scope.cwd, notes) else {
                    continue;
                };
                let rel = dir.strip_prefix(&st.path).unwrap_or(dir);
                let file = s(&dir.join(super::sensitive::FILE_NAME));
                for r in d.references() {
                    let parsed = r.parsed.under(rel);
                    rows.push(RefRow {
                        name: r.name.clone(),
                        level: st.level,
                        backend: crate::refs::provider(&parsed).backend(&parsed, &ctx),
                        reference: r.text,
                        file: file.clone(),
                        line: r.line,
                        contacted: allowed,
                        why: (!allowed).then(|| "the project store is not allowed".to_string()),
                    });
                }
            }
            // An overlay's reference of a name a later file of this store
            // references too is not resolved (the later one wins): a load
            // contacts nothing for it.
            for i in first..rows.len() {
                let wins = rows[i + 1..].iter().rfind(|w| w.name == rows[i].name);
                if let Some(file) = wins.map(|w| w.file.clone()) {
                    let r = &mut rows[i];
                    if r.contacted {
                        r.contacted = false;
                        r.why = Some(format!("{file} references it too and wins"));
                    }
                }
            }
        }
        rows
    }

    /// The system, user and project stores.
    fn store_rows(
        &self,
        root_scope: &scope::Scope,
        skipped_by_gate: bool,
        trust: &mut TrustOf<'_>,
    ) -> Vec<StoreRow> {
        let scope = &self.prepared().scope;
        let mut stores = Vec::new();
        // The one rule env uses (issue 21: status once skipped a `~/sys`
        // that env loaded).
        let sys = SystemStore::decide(self.base());
        stores.push(StoreRow {
            level: "system",
            path: sys.path().map(s),
            state: match &sys {
                SystemStore::Present(_) => "present",
                SystemStore::Absent(_) => "absent",
                SystemStore::Skipped(..) => "skipped",
            },
            why: sys.why().or_else(|| match &sys {
                SystemStore::Absent(p) => presence(p).1,
                _ => None,
            }),
            trust: "not needed (root's own store)".into(),
        });
        let (state, why) = match &scope.user_refused {
            Some(why) => ("skipped", Some(why.clone())),
            None => presence(&scope.user_root),
        };
        stores.push(StoreRow {
            level: "user",
            path: Some(s(&scope.user_root)),
            state,
            why,
            trust: "not needed (your own store)".into(),
        });
        if root_scope.level == "project" {
            let store = &root_scope.agents_root;
            let (mut state, mut why) = presence(store);
            let trust = if state == "present" {
                match &root_scope.project_root {
                    Some(r) if store == &r.join(".agents") => trust.of(r),
                    // Loaded by its real path (an allowed store under the gate).
                    _ => crate::session::trust::TrustState::Allowed
                        .as_str()
                        .to_string(),
                }
            } else {
                "not applicable".to_string()
            };
            if skipped_by_gate {
                state = "skipped";
                why = Some(format!(
                    "--require-trust: {trust}; run 'agentenv allow' to load it"
                ));
            }
            stores.push(StoreRow {
                level: "project",
                path: Some(s(store)),
                state,
                why,
                trust,
            });
        } else if !self.requested().global {
            stores.push(StoreRow {
                level: "project",
                path: Some(s(&root_scope.agents_root)),
                state: "skipped",
                why: Some("it is the user store".into()),
                trust: "not needed (your own store)".into(),
            });
        }
        stores
    }

    /// Every env-file candidate; a plain file that exists is read (as env
    /// reads it) to tell whether it is evaluated natively.
    fn file_rows(&self) -> Vec<FileRow> {
        let p: &Prepared = self.prepared();
        p.env_files
            .iter()
            .map(|f| {
                let path = paths::at(&f.path, &p.scope.cwd);
                let exists = path.is_file();
                let evaluated = (exists && !f.script).then(|| {
                    match crate::fsutil::read_input(&path, super::MAX_PLAIN_FILE) {
                        Ok(text) => match native::evaluate(&text, self.base()) {
                            native::Outcome::Bash => "bash",
                            _ => "native",
                        },
                        Err(_) => "unreadable",
                    }
                });
                FileRow {
                    tier: match f.tier {
                        Tier::Pre => "pre",
                        Tier::Main => "main",
                    },
                    level: f.level.clone(),
                    path: s(&f.path),
                    kind: if f.script { "env.py" } else { "plain" },
                    exists,
                    evaluated,
                }
            })
            .collect()
    }

    /// `--cache`: the invocations people run, looked up without storing.
    fn cache_row(&self, auto: &str) -> CacheRow {
        let p = self.prepared();
        let dir = cache::dir_for(&p.scope.user_root);
        let usable = match &p.scope.user_refused {
            Some(_) => Err("is in a user store that is not loaded".to_string()),
            None => cache::usable_dir(&dir).map_err(|u| u.describe().to_string()),
        };
        let mut checks: Vec<(String, &str, bool)> = vec![
            (format!("env --cache (auto: {auto})"), auto, false),
            (format!("env --diff --cache (auto: {auto})"), auto, true),
        ];
        if auto != "export" {
            checks.push(("env --diff --cache --format export".into(), "export", true));
        }
        let lookups = checks
            .into_iter()
            .map(|(invocation, format, diff)| {
                let key = cache::key_for(p, self.base(), format, diff);
                let hit = usable.is_ok() && cache::lookup(&dir, &key).is_some();
                Lookup { invocation, hit }
            })
            .collect();
        CacheRow {
            dir: s(&dir),
            usable: usable.is_ok(),
            why: usable.err(),
            lookups,
        }
    }
}

/// The trust decision for a root: the one the gate made, else made now by
/// the same function (the hook's and env's), each root once.
struct TrustOf<'a> {
    plan: &'a Plan,
    decided: Vec<gate::Decision>,
}

impl TrustOf<'_> {
    fn of(&mut self, root: &Path) -> String {
        if let Some(d) = self.decided.iter().find(|d| d.root == root) {
            return d.trust();
        }
        let bounds = gate::bounds(self.plan.requested(), self.plan.base());
        let d = gate::decide(root, self.plan.base(), bounds);
        let t = d.trust();
        self.decided.push(d);
        t
    }
}

fn dir_rows(list: &[PathBuf], cwd: &Path) -> Vec<DirRow> {
    list.iter()
        .map(|p| DirRow {
            path: s(p),
            exists: paths::at(p, cwd).is_dir(),
        })
        .collect()
}
