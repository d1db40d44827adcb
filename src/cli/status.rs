//! `agentenv status [DIR] [--format text|json]`
//! (docs/integrations.md#what-would-load-agentenv-status, like `direnv status`): what
//! `agentenv env` would walk from DIR (default: the current directory) — the
//! project root and the rule that chose it, the shell hook's root, every store
//! (present, absent or skipped and why, and the project store's trust state),
//! the overlays, every candidate file in walk order (tier, level, kind,
//! exists), the `bin` and `lib` candidates, and whether `--cache` would hit.
//!
//! The data is the session's (`Plan::status`, from the same plan `env`
//! makes, so the two share every rule); this file only finds DIR and
//! prints the data as text or JSON. Nothing is run: no `env.py`, no bash.
//! Names and paths only: no value is printed.

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

/// The directory to report for: DIR as `cd DIR` would leave it (the
/// resolved path, getcwd's), else the current directory.
fn directory(dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let here = super::current_dir()?;
    let Some(d) = dir else {
        return Ok(here);
    };
    let joined = here.join(d);
    match std::fs::canonicalize(&joined) {
        Ok(c) if c.is_dir() => Ok(c),
        _ => Err(Failure::runtime(format!(
            "{} is not a directory",
            joined.display()
        ))),
    }
}

/// Gather the report as JSON (the text form is printed from it): the
/// session's plan as `env` makes it (the trust gate included, no trace,
/// no cache), then its [`crate::session::Status`].
fn report(a: &StatusArgs) -> Result<Value, Failure> {
    let cwd = directory(a.dir.as_deref())?;
    let mut req = super::session::request(&a.scope, crate::session::CacheMode::Off)?;
    req.options.cwd = Some(cwd);
    req.trace = false;
    let plan = super::session::planned(&req)?;
    let status = plan.status(crate::render::detect_auto().name())?;
    crate::log::notes(&status.notes);
    let mut v = serde_json::to_value(&status).expect("a Status serializes");
    // The agent clients agentenv's hooks are wired into (user settings,
    // and the project's).
    let project = v["project_root"].as_str().map(PathBuf::from);
    v["agent_wiring"] =
        serde_json::to_value(crate::agent::install::wiring_found(project.as_deref()))
            .expect("the wiring found serializes");
    Ok(v)
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
        // "not allowed" reads as "not loaded" to a direnv user: say who
        // loads it anyway.
        let trust = x["trust"].as_str().unwrap_or("");
        if x["level"] == "project"
            && x["state"] == "present"
            && (trust == "not allowed" || trust.starts_with("changed"))
        {
            o.push_str(
                "           env, exec, explain and redact load it as it is (they check trust only\n\
                 \x20          with --require-trust); the shell hook and the agent hooks skip it\n\
                 \x20          until you run 'agentenv allow'\n",
            );
        }
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
    let refs = r["references"].as_array().cloned().unwrap_or_default();
    if !refs.is_empty() {
        o.push_str("secret references (backends a load contacts):\n");
        for x in &refs {
            let contact = if x["contacted"] == json!(true) {
                st(&x["backend"])
            } else {
                format!("not contacted: {}", st(&x["why"]))
            };
            // The file and line that declare it (a store's or an overlay's).
            let at = format!("{}:{}", st(&x["file"]), x["line"]);
            let (level, name) = (st(&x["level"]), st(&x["name"]));
            let reference = st(&x["reference"]);
            o.push_str(&format!(
                "  {level:<8} {name}  {reference}  {contact}  ({at})\n"
            ));
        }
    }
    let wired = r["agent_wiring"].as_array().cloned().unwrap_or_default();
    let none = if wired.is_empty() {
        " (none found)"
    } else {
        ""
    };
    o.push_str(&format!("agent wiring (init CLIENT):{none}\n"));
    for x in &wired {
        let events = x["events"].as_array().map_or(String::new(), |a| {
            a.iter().map(st).collect::<Vec<_>>().join(", ")
        });
        let (client, scope) = (st(&x["client"]), st(&x["scope"]));
        o.push_str(&format!(
            "  {client:<8} {scope:<7} {}  {events}\n",
            st(&x["file"])
        ));
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
