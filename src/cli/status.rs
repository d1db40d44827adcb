//! `agentenv status [DIR] [--format text|json]`
//! (README.md#what-would-load-agentenv-status, like `direnv status`): what
//! `agentenv env` would walk from DIR (default: the current directory) — the
//! project root and the rule that chose it, the shell hook's root, every store
//! (present, absent or skipped and why, and the project store's trust state),
//! the overlays, every candidate file in walk order (tier, level, kind,
//! exists), the `bin` and `lib` candidates, and whether `--cache` would hit.
//!
//! Nothing is run: no `env.py`, no bash. Files are only stat'ed, and read
//! where `env` itself would read them before running anything (the trust
//! digest, the cache key's signatures, a plain file's text to tell whether
//! it is evaluated natively). Names and paths only: no value is printed.

use super::session::TextOrJson;
use super::{Exit, Failure};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
#[command(args_override_self = true)]
pub struct StatusArgs {
    #[command(flatten)]
    pub scope: super::session::ScopeArgs,
    /// Output format.
    #[arg(long = "format", value_name = "F", value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// The directory to report for, as if `agentenv env` ran there
    /// (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
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

/// Gather the report as JSON (the text form is printed from it).
fn report(a: &StatusArgs) -> Result<Value, Failure> {
    let base = crate::core::process_env();
    let here = super::current_dir()?;
    let cwd = match &a.dir {
        Some(d) => {
            // As `cd DIR` would leave it: the resolved path (getcwd's).
            let joined = here.join(d);
            match std::fs::canonicalize(&joined) {
                Ok(c) if c.is_dir() => c,
                _ => {
                    return Err(Failure::runtime(format!(
                        "{} is not a directory",
                        joined.display()
                    )))
                }
            }
        }
        None => here,
    };
    // The scope flags as `env` reads them, without the trust gate yet.
    let opts = crate::session::Options {
        cwd: Some(cwd.clone()),
        ..super::session::scope_options(&a.scope)?
    };
    let required = a.scope.require_trust;
    // The gate, as env applies it: decides whether the project store loads.
    let mut gated = opts.clone();
    let gate_decision = super::trust::gate(required, &mut gated, &base);
    let skipped_by_gate = gated.global && !opts.global;
    let prepared = crate::session::prepare(&gated, &base).map_err(Failure::runtime)?;
    crate::log::notes(&prepared.notes);
    let ungated = if skipped_by_gate {
        let p = crate::session::prepare(&opts, &base).map_err(Failure::runtime)?;
        crate::log::notes(&p.notes);
        Some(p)
    } else {
        None
    };
    let scope = &prepared.scope;

    // The project root and its rule (the reference's, as env uses it).
    let root_scope = &ungated.as_ref().unwrap_or(&prepared).scope;
    let rule = if opts.global {
        "-g: no project"
    } else {
        match crate::session::scope::project_root_source(&base) {
            Some("AGENTS_PROJECT_ROOT") => "$AGENTS_PROJECT_ROOT",
            Some(_) => "$CLAUDE_PROJECT_DIR",
            None => "the directory (neither $AGENTS_PROJECT_ROOT nor $CLAUDE_PROJECT_DIR is set)",
        }
    };
    let home = crate::core::get(&base, "HOME").map(PathBuf::from);
    let hook_root = crate::trust::find_project_root(&cwd, home.as_deref());
    // The trust decision for a root: the one the gate made, else made now
    // by the same function (the hook's and env's).
    let bounds = crate::session::gate::bounds(&opts, &base);
    let mut decided: Vec<crate::session::gate::Decision> = gate_decision.into_iter().collect();
    let mut trust_of = |root: &Path| -> String {
        if let Some(d) = decided.iter().find(|d| d.root == root) {
            return d.trust();
        }
        let d = crate::session::gate::decide(root, &base, bounds);
        let t = d.trust();
        decided.push(d);
        t
    };
    // What the shell hook would decide for its root's store.
    let hook_trust = hook_root.as_deref().map(&mut trust_of);

    // Stores.
    let mut stores = Vec::new();
    // The one rule env uses (issue 21: status once skipped a `~/sys` that
    // env loaded).
    let sys = crate::session::scope::SystemStore::decide(&base);
    let sys_state = match &sys {
        crate::session::scope::SystemStore::Present(_) => "present",
        crate::session::scope::SystemStore::Absent(_) => "absent",
        crate::session::scope::SystemStore::Skipped(..) => "skipped",
    };
    stores.push(json!({
        "level": "system",
        "path": sys.path().map(s),
        "state": sys_state,
        "why": sys.why().or_else(|| match &sys {
            crate::session::scope::SystemStore::Absent(p) => presence(p).1,
            _ => None,
        }),
        "trust": "not needed (root's own store)",
    }));
    let (u_state, u_why) = match &scope.user_refused {
        Some(why) => ("skipped", Some(why.clone())),
        None => presence(&scope.user_root),
    };
    stores.push(json!({
        "level": "user",
        "path": s(&scope.user_root),
        "state": u_state,
        "why": u_why,
        "trust": "not needed (your own store)",
    }));
    if root_scope.level == "project" {
        let store = &root_scope.agents_root;
        let (mut st, mut why) = presence(store);
        let trust = if st == "present" {
            match &root_scope.project_root {
                Some(r) if store == &r.join(".agents") => trust_of(r),
                // Loaded by its real path (an allowed store under the gate).
                _ => crate::trust::TrustState::Allowed.as_str().to_string(),
            }
        } else {
            "not applicable".to_string()
        };
        if skipped_by_gate {
            st = "skipped";
            why = Some(format!(
                "--require-trust: {trust}; run 'agentenv allow' to load it"
            ));
        }
        stores.push(json!({
            "level": "project",
            "path": s(store),
            "state": st,
            "why": why,
            "trust": trust,
        }));
    } else if !opts.global {
        stores.push(json!({
            "level": "project",
            "path": s(&root_scope.agents_root),
            "state": "skipped",
            "why": "it is the user store",
            "trust": "not needed (your own store)",
        }));
    }

    let overlays: Vec<Value> = scope
        .overlays
        .iter()
        .map(|o| json!({"name": o.name, "path": s(&o.path), "store": s(&o.store)}))
        .collect();

    let files: Vec<Value> = prepared
        .env_files
        .iter()
        .map(|f| {
            let path = crate::session::paths::at(&f.path, &scope.cwd);
            let exists = path.is_file();
            let mut v = json!({
                "tier": match f.tier {
                    crate::session::Tier::Pre => "pre",
                    crate::session::Tier::Main => "main",
                },
                "level": f.level,
                "path": s(&f.path),
                "kind": if f.script { "env.py" } else { "plain" },
                "exists": exists,
            });
            if exists && !f.script {
                let eval = match crate::fsutil::read_input(&path, 16 << 20) {
                    Ok(text) => match crate::session::native::evaluate(&text, &base) {
                        crate::session::native::Outcome::Bash => "bash",
                        _ => "native",
                    },
                    Err(_) => "unreadable",
                };
                v["evaluated"] = json!(eval);
            }
            v
        })
        .collect();
    let dirs = |list: &[PathBuf]| -> Vec<Value> {
        list.iter()
            .map(|p| {
                json!({"path": s(p), "exists": crate::session::paths::at(p, &scope.cwd).is_dir()})
            })
            .collect()
    };

    // --cache: the invocations people run, looked up without storing.
    let dir = crate::session::cache::dir_for(&scope.user_root);
    let usable = match &scope.user_refused {
        Some(_) => Err("is in a user store that is not loaded".to_string()),
        None => crate::session::cache::usable_dir(&dir).map_err(|u| u.describe().to_string()),
    };
    let auto = crate::render::detect_auto().name();
    let mut checks: Vec<(String, &str, bool)> = vec![
        (format!("env --cache (auto: {auto})"), auto, false),
        (format!("env --diff --cache (auto: {auto})"), auto, true),
    ];
    if auto != "export" {
        checks.push(("env --diff --cache --format export".into(), "export", true));
    }
    let lookups: Vec<Value> = checks
        .iter()
        .map(|(what, format, diff)| {
            let key = crate::session::cache::key_for(&prepared, &base, format, *diff);
            let hit = usable.is_ok() && crate::session::cache::lookup(&dir, &key).is_some();
            json!({"invocation": what, "hit": hit})
        })
        .collect();

    Ok(json!({
        "directory": s(&cwd),
        "project_root": root_scope.project_root.as_deref().map(s),
        "project_root_rule": rule,
        "hook_root": hook_root.as_deref().map(s),
        "hook_root_trust": hook_trust,
        "scope": scope.level,
        "interpreter": prepared.interpreter.as_deref().map(s),
        "stores": stores,
        "overlays": overlays,
        "files": files,
        "bin": dirs(&prepared.bin_paths),
        "lib": dirs(&prepared.lib_candidates),
        "cache": {
            "dir": s(&dir),
            "usable": usable.is_ok(),
            "why": usable.err(),
            "lookups": lookups,
        },
    }))
}

fn text(r: &Value) -> String {
    // Paths and names shown with control characters (line breaks too)
    // escaped: a directory name cannot drive the terminal or forge a line.
    let esc = |s: &str| crate::log::escape_controls(s, false).into_owned();
    let st = |v: &Value| esc(v.as_str().unwrap_or(""));
    let opt = |v: &Value| v.as_str().map_or("(none)".to_string(), esc);
    let mut o = String::new();
    o.push_str(&format!("directory: {}\n", st(&r["directory"])));
    o.push_str(&format!(
        "project root: {} (chosen by: {})\n",
        opt(&r["project_root"]),
        st(&r["project_root_rule"])
    ));
    let hook_trust = r["hook_root_trust"]
        .as_str()
        .map_or(String::new(), |t| format!("; its .agents: {t}"));
    o.push_str(&format!(
        "shell hook root: {} (nearest directory upwards holding .agents, below $HOME){hook_trust}\n",
        opt(&r["hook_root"])
    ));
    o.push_str(&format!("scope: {}\n", st(&r["scope"])));
    o.push_str(&format!("env.py interpreter: {}\n", opt(&r["interpreter"])));
    o.push_str("stores:\n");
    for x in r["stores"].as_array().into_iter().flatten() {
        let why = x["why"]
            .as_str()
            .map_or(String::new(), |w| format!(" ({w})"));
        o.push_str(&format!(
            "  {:<8} {}  {}{}; trust: {}\n",
            st(&x["level"]),
            opt(&x["path"]),
            st(&x["state"]),
            why,
            st(&x["trust"])
        ));
    }
    o.push_str("overlays:");
    let overlays = r["overlays"].as_array().cloned().unwrap_or_default();
    if overlays.is_empty() {
        o.push_str(" (none)");
    }
    o.push('\n');
    for x in &overlays {
        o.push_str(&format!("  {}  {}\n", st(&x["name"]), st(&x["path"])));
    }
    o.push_str("files, in walk order:\n");
    for x in r["files"].as_array().into_iter().flatten() {
        let state = if x["exists"] == json!(true) {
            match x["evaluated"].as_str() {
                Some(e) => format!("exists, evaluated by {e}"),
                None => "exists, executed".to_string(),
            }
        } else {
            "missing".to_string()
        };
        o.push_str(&format!(
            "  {:<4} {:<12} {:<6} {}  {}\n",
            st(&x["tier"]),
            st(&x["level"]),
            st(&x["kind"]),
            st(&x["path"]),
            state
        ));
    }
    for (title, key) in [("bin (PATH)", "bin"), ("lib", "lib")] {
        o.push_str(&format!("{title}:\n"));
        for x in r[key].as_array().into_iter().flatten() {
            let e = if x["exists"] == json!(true) {
                "exists"
            } else {
                "missing"
            };
            o.push_str(&format!("  {}  {e}\n", st(&x["path"])));
        }
    }
    let c = &r["cache"];
    let usable = match c["why"].as_str() {
        Some(w) => format!("not used: it {w}"),
        None => "usable".to_string(),
    };
    o.push_str(&format!("cache: {} ({usable})\n", st(&c["dir"])));
    for x in c["lookups"].as_array().into_iter().flatten() {
        let hit = if x["hit"] == json!(true) {
            "hit"
        } else {
            "miss"
        };
        o.push_str(&format!("  {}: {hit}\n", st(&x["invocation"])));
    }
    o
}

pub fn run(a: StatusArgs) -> Exit {
    let r = report(&a)?;
    let out = match a.format {
        TextOrJson::Json => {
            let mut t = serde_json::to_string_pretty(&r).expect("a Value serializes");
            t.push('\n');
            t
        }
        // A display: control characters in paths and names escaped (the
        // JSON form escapes C0 itself and is data).
        TextOrJson::Text => crate::log::escape_controls(&text(&r), true).into_owned(),
    };
    super::print(out.as_bytes())
}
