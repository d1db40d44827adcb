//! The provenance view of an [`Assembly`] (`agentenv explain` shows a
//! session env with it): where each variable came from.
//!
//! Built only from an [`Assembly`]'s provenance: for each variable, its
//! final state against the base environment and every layer that touched
//! it, in application order — the layer's kind, file and level, what it did
//! (set, override, unset, skipped and why) and the source line where known.
//! Values are shown only when asked for.
//!
//! # Library use: assemble, render and explain a session from Rust
//!
//! The whole `agentenv env` pipeline is callable without the CLI:
//! [`crate::session::assemble`] walks the stores and runs every layer,
//! [`crate::render`] prints the result, and [`report`] explains it.
//!
//! ```
//! use agentenv::core::Env;
//! use agentenv::render::{render, Format, View};
//! use agentenv::session::{self, explain, Options};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let w = dir.path();
//! std::fs::create_dir_all(w.join("home/.agents")).unwrap();
//! std::fs::create_dir_all(w.join("proj/.agents")).unwrap();
//! std::fs::write(w.join("home/.agents/env"), "EDITOR=vi\nTOKEN='t0k3n'\n").unwrap();
//! std::fs::write(w.join("proj/.agents/env"), "export EDITOR='code --wait'\n").unwrap();
//!
//! // The base environment is an input like any other (here: a clean one).
//! let mut base = Env::new();
//! base.insert("HOME".into(), w.join("home").into());
//! base.insert("PATH".into(), "/usr/bin:/bin".into());
//! base.insert("AGENTS_SYSTEM_ROOT".into(), w.join("no-system").into());
//!
//! let opts = Options { cwd: Some(w.join("proj")), ..Default::default() };
//! let s = session::assemble(&opts, base).expect("scope resolves");
//!
//! // The change set, as `agentenv env --diff --format export` prints it.
//! let text = render(Format::Export, &View::diff(s.assembly.base(), s.changes()));
//! assert!(text.contains("export EDITOR='code --wait'\n"));
//!
//! // Where EDITOR came from: the user file's line 1, then the project's.
//! let r = explain::report(&s.assembly, &["EDITOR".into()]);
//! let t = &r[0].touches;
//! assert_eq!((t[0].level.as_deref(), t[0].line), (Some("user"), Some(1)));
//! assert_eq!((t[1].level.as_deref(), t[1].action), (Some("project"), "override"));
//! ```
//!
//! A hand-built assembly explains the same way:
//!
//! ```
//! use agentenv::core::{Assembly, ChangeSet, Env, LayerInfo, LayerKind};
//! use agentenv::core::explain;
//!
//! let mut base = Env::new();
//! base.insert("PATH".into(), "/usr/bin".into());
//! let mut a = Assembly::new(base);
//! let l = a.add_layer(
//!     LayerInfo::new(LayerKind::PlainFile)
//!         .with_path("/home/me/.agents/env")
//!         .with_level("user"),
//! );
//! let mut cs = ChangeSet::new();
//! cs.set_at("EDITOR", "vi", 2);
//! a.apply(l, &cs);
//!
//! let reports = explain::report(&a, &[]);
//! let text = explain::render_text(&reports, false);
//! assert!(text.starts_with("EDITOR  set\n"));
//! assert!(text.contains("/home/me/.agents/env:2"));
//! assert!(!text.contains("vi\n"));
//! ```

use crate::core::{Action, Assembly};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};

/// A variable's final state relative to the base environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not in the base env; set by the layers.
    Set,
    /// In the base env with another value; the layers changed it.
    Changed,
    /// Present with its base value (maybe re-set by a layer).
    Unchanged,
    /// In the base env; a layer removed it.
    Removed,
    /// Neither in the base env nor in the result.
    Absent,
}

impl State {
    /// The name the text and JSON reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Set => "set",
            State::Changed => "changed",
            State::Unchanged => "unchanged",
            State::Removed => "removed",
            State::Absent => "absent",
        }
    }
}

/// One layer's touch of one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchReport {
    /// 1-based position of the layer in the assembly.
    pub layer: usize,
    /// The layer's kind ([`crate::core::LayerKind::as_str`]).
    pub kind: &'static str,
    /// The layer's level, if it has one.
    pub level: Option<String>,
    /// The layer's file, if it has one.
    pub file: Option<String>,
    /// `set`, `override`, `unset` or `skipped`.
    pub action: &'static str,
    /// Why a value was skipped (never a value).
    pub reason: Option<String>,
    /// The source line, when the layer has lines.
    pub line: Option<u32>,
}

/// Everything `explain` says about one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarReport {
    /// The variable's name.
    pub name: OsString,
    /// Its final state relative to the base.
    pub state: State,
    /// The final value (present when the variable exists at the end).
    pub value: Option<OsString>,
    /// Every layer that touched it, in order.
    pub touches: Vec<TouchReport>,
}

/// A layer that failed as a whole and contributed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedLayer {
    /// 1-based position of the layer in the assembly.
    pub layer: usize,
    /// The layer's kind ([`crate::core::LayerKind::as_str`]).
    pub kind: &'static str,
    /// The layer's level, if it has one.
    pub level: Option<String>,
    /// The layer's file, if it has one.
    pub file: Option<String>,
    /// Why (never a value: exit codes, parser positions, timeouts).
    pub reason: String,
}

/// Every layer of `a` that failed, in order.
pub fn failed_layers(a: &Assembly) -> Vec<FailedLayer> {
    a.layers()
        .iter()
        .enumerate()
        .filter_map(|(i, rec)| {
            rec.failure.as_ref().map(|why| FailedLayer {
                layer: i + 1,
                kind: rec.info.kind.as_str(),
                level: rec.info.level.clone(),
                file: rec
                    .info
                    .path
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned()),
                reason: why.clone(),
            })
        })
        .collect()
}

/// Reports for `vars`, or, when empty, for every variable that differs
/// from the base env at the end (new, changed or removed), in byte order.
pub fn report(a: &Assembly, vars: &[OsString]) -> Vec<VarReport> {
    let names: Vec<OsString> = if vars.is_empty() {
        let d = a.diff();
        let mut s: BTreeSet<OsString> = d.assigned().keys().cloned().collect();
        s.extend(d.removed().iter().cloned());
        s.into_iter().collect()
    } else {
        vars.to_vec()
    };
    names.into_iter().map(|n| one(a, n)).collect()
}

fn one(a: &Assembly, name: OsString) -> VarReport {
    let base = a.base().get(&name);
    let fin = a.final_value(&name);
    let state = match (base, fin) {
        (None, Some(_)) => State::Set,
        (Some(b), Some(f)) if b.as_os_str() == f => State::Unchanged,
        (Some(_), Some(_)) => State::Changed,
        (Some(_), None) => State::Removed,
        (None, None) => State::Absent,
    };
    let touches = a
        .touches(&name)
        .iter()
        .map(|t| {
            let rec = &a.layers()[t.layer];
            let (action, reason) = match &t.action {
                Action::Set => ("set", None),
                Action::Override => ("override", None),
                Action::Unset => ("unset", None),
                Action::Skipped(r) => ("skipped", Some(r.clone())),
            };
            TouchReport {
                layer: t.layer + 1,
                kind: rec.info.kind.as_str(),
                level: rec.info.level.clone(),
                file: rec
                    .info
                    .path
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned()),
                action,
                reason,
                line: t.line,
            }
        })
        .collect();
    VarReport {
        value: fin.map(OsStr::to_os_string),
        name,
        state,
        touches,
    }
}

/// A value for display: the text between single quotes, with control
/// characters, quotes and backslashes escaped; undecodable bytes as `\xNN`.
fn show_value(v: &OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("'");
    for chunk in v.as_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\'' => out.push_str("\\'"),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.extend(c.escape_default()),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

fn location(t: &TouchReport) -> String {
    match (&t.file, t.line) {
        (Some(f), Some(l)) => format!("{f}:{l}"),
        (Some(f), None) => f.clone(),
        (None, Some(l)) => format!("line {l}"),
        (None, None) => "-".to_string(),
    }
}

fn action_text(t: &TouchReport) -> String {
    match &t.reason {
        Some(r) => format!("{} ({r})", t.action),
        None => t.action.to_string(),
    }
}

/// Text: one block per variable — a header `NAME  state[ = 'value']`, then
/// one aligned row per touch: layer number, kind, level, `file[:line]`,
/// action. Column widths are shared by the whole output.
pub fn render_text(reports: &[VarReport], show_values: bool) -> String {
    render_text_with_failures(reports, &[], show_values)
}

/// [`render_text`], then — when some layer failed — a last block listing
/// the failed layers (number, kind, level, file, why).
pub fn render_text_with_failures(
    reports: &[VarReport],
    failed: &[FailedLayer],
    show_values: bool,
) -> String {
    let mut out = render_vars(reports, show_values);
    if !failed.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("failed layers (they changed nothing)\n");
        let cells: Vec<[String; 4]> = failed
            .iter()
            .map(|f| {
                [
                    format!("#{}", f.layer),
                    f.kind.to_string(),
                    f.level.clone().unwrap_or_else(|| "-".into()),
                    f.file.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        let mut w = [0usize; 4];
        for row in &cells {
            for (i, c) in row.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        for (row, f) in cells.iter().zip(failed) {
            out.push_str("  ");
            for (i, c) in row.iter().enumerate() {
                out.push_str(c);
                out.extend(std::iter::repeat_n(' ', w[i] - c.chars().count() + 2));
            }
            out.push_str(&f.reason);
            out.push('\n');
        }
    }
    out
}

fn render_vars(reports: &[VarReport], show_values: bool) -> String {
    let rows: Vec<Vec<[String; 5]>> = reports
        .iter()
        .map(|r| {
            r.touches
                .iter()
                .map(|t| {
                    [
                        format!("#{}", t.layer),
                        t.kind.to_string(),
                        t.level.clone().unwrap_or_else(|| "-".into()),
                        location(t),
                        action_text(t),
                    ]
                })
                .collect()
        })
        .collect();
    let mut w = [0usize; 4];
    for row in rows.iter().flatten() {
        for (i, cell) in row.iter().take(4).enumerate() {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for (i, (r, rows)) in reports.iter().zip(&rows).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&r.name.to_string_lossy());
        out.push_str("  ");
        out.push_str(r.state.as_str());
        if show_values {
            if let Some(v) = &r.value {
                out.push_str(" = ");
                out.push_str(&show_value(v));
            }
        }
        out.push('\n');
        if rows.is_empty() {
            out.push_str("  (no layer touched it)\n");
        }
        for row in rows {
            out.push_str("  ");
            for (c, cell) in row.iter().enumerate() {
                out.push_str(cell);
                if c < 4 {
                    let pad = w[c] - cell.chars().count() + 2;
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push('\n');
        }
    }
    out
}

/// JSON: `{"variables": {...}, "failed_layers": [...]}`. `variables` is
/// keyed by variable name (in report order), each with `state`, `value`
/// (only with `show_values`; `null` when absent) and `touches` (`layer`,
/// `kind`, `level`, `file`, `line`, `action`, `reason`); `failed_layers`
/// lists `layer`, `kind`, `level`, `file`, `reason`.
pub fn render_json(reports: &[VarReport], failed: &[FailedLayer], show_values: bool) -> String {
    let mut vars = Map::new();
    for r in reports {
        let mut o = Map::new();
        o.insert("state".into(), json!(r.state.as_str()));
        if show_values {
            o.insert(
                "value".into(),
                match &r.value {
                    Some(v) => json!(v.to_string_lossy()),
                    None => Value::Null,
                },
            );
        }
        let touches: Vec<Value> = r
            .touches
            .iter()
            .map(|t| {
                json!({
                    "layer": t.layer,
                    "kind": t.kind,
                    "level": t.level,
                    "file": t.file,
                    "line": t.line,
                    "action": t.action,
                    "reason": t.reason,
                })
            })
            .collect();
        o.insert("touches".into(), Value::Array(touches));
        vars.insert(r.name.to_string_lossy().into_owned(), Value::Object(o));
    }
    let failed: Vec<Value> = failed
        .iter()
        .map(|f| {
            json!({
                "layer": f.layer,
                "kind": f.kind,
                "level": f.level,
                "file": f.file,
                "reason": f.reason,
            })
        })
        .collect();
    let top = json!({ "variables": Value::Object(vars), "failed_layers": failed });
    let mut s = serde_json::to_string_pretty(&top).unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ChangeSet, Env, LayerInfo, LayerKind};

    fn sample() -> Assembly {
        let mut base = Env::new();
        base.insert("PATH".into(), "/usr/bin".into());
        base.insert("GONE".into(), "secret-gone".into());
        base.insert("HOST".into(), "h".into());
        let mut a = Assembly::new(base);
        let bins = a.add_layer(LayerInfo::new(LayerKind::BinPaths));
        let mut cs = ChangeSet::new();
        cs.set("PATH", "/u/bin:/usr/bin");
        a.apply(bins, &cs);
        let f = a.add_layer(
            LayerInfo::new(LayerKind::PlainFile)
                .with_path("/u/.agents/env")
                .with_level("user"),
        );
        let mut cs = ChangeSet::new();
        cs.set_at("TOKEN", "s3cr3t", 4);
        cs.set_at("PATH", "/p:/u/bin:/usr/bin", 5);
        cs.remove("GONE");
        a.apply(f, &cs);
        let py = a.add_layer(
            LayerInfo::new(LayerKind::EnvScript)
                .with_path("/w/.agents/overlays/tools/env.py")
                .with_level("tools"),
        );
        a.skip(
            py,
            OsStr::new("TOKEN"),
            "value is a JSON int, not a string",
            None,
        );
        a
    }

    #[test]
    fn default_lists_changed_vars_in_order() {
        let r = report(&sample(), &[]);
        let names: Vec<_> = r
            .iter()
            .map(|v| v.name.to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["GONE", "PATH", "TOKEN"]);
        assert_eq!(r[0].state, State::Removed);
        assert_eq!(r[1].state, State::Changed);
        assert_eq!(r[2].state, State::Set);
        assert_eq!(r[2].touches.len(), 2);
        assert_eq!(r[2].touches[1].action, "skipped");
    }

    #[test]
    fn text_is_aligned_and_hides_values() {
        let text = render_text(&report(&sample(), &[]), false);
        let expected = "\
GONE  removed
  #2  plain file  user   /u/.agents/env                    unset

PATH  changed
  #1  bin paths   -      -                                 override
  #2  plain file  user   /u/.agents/env:5                  override

TOKEN  set
  #2  plain file  user   /u/.agents/env:4                  set
  #3  env.py      tools  /w/.agents/overlays/tools/env.py  skipped (value is a JSON int, not a string)
";
        assert_eq!(text, expected);
        assert!(!text.contains("s3cr3t") && !text.contains("secret-gone"));
    }

    #[test]
    fn values_only_when_asked() {
        let r = report(&sample(), &[]);
        let text = render_text(&r, true);
        assert!(text.contains("TOKEN  set = 's3cr3t'\n"));
        assert!(text.contains("GONE  removed\n"));
        let j: Value = serde_json::from_str(&render_json(&r, &[], true)).unwrap();
        assert_eq!(j["variables"]["TOKEN"]["value"], "s3cr3t");
        assert_eq!(j["variables"]["GONE"]["value"], Value::Null);
        let hidden = render_json(&r, &[], false);
        assert!(!hidden.contains("s3cr3t") && !hidden.contains("\"value\""));
    }

    #[test]
    fn json_has_the_same_content() {
        let a = sample();
        let j: Value =
            serde_json::from_str(&render_json(&report(&a, &[]), &failed_layers(&a), false))
                .unwrap();
        let j = &j["variables"];
        let keys: Vec<_> = j.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["GONE", "PATH", "TOKEN"]);
        let t = &j["TOKEN"]["touches"];
        assert_eq!(t[0]["kind"], "plain file");
        assert_eq!(t[0]["line"], 4);
        assert_eq!(t[0]["level"], "user");
        assert_eq!(t[1]["action"], "skipped");
        assert_eq!(t[1]["reason"], "value is a JSON int, not a string");
        assert_eq!(j["PATH"]["touches"][0]["file"], Value::Null);
    }

    #[test]
    fn failed_layers_are_listed() {
        let mut a = sample();
        let l = a.add_layer(
            LayerInfo::new(LayerKind::PlainFile)
                .with_path("/w/.agents/local.env")
                .with_level("project"),
        );
        a.fail(l, "source failed");
        let f = failed_layers(&a);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].layer, 4);
        let text = render_text_with_failures(&report(&a, &[]), &f, false);
        assert!(text.ends_with(
            "\nfailed layers (they changed nothing)\n  #4  plain file  project  /w/.agents/local.env  source failed\n"
        ));
        let j: Value = serde_json::from_str(&render_json(&[], &f, false)).unwrap();
        assert_eq!(j["failed_layers"][0]["reason"], "source failed");
        assert_eq!(j["failed_layers"][0]["file"], "/w/.agents/local.env");
        assert_eq!(j["variables"], serde_json::json!({}));
    }

    #[test]
    fn named_vars_include_untouched_ones() {
        let r = report(&sample(), &[OsString::from("HOST"), OsString::from("NOPE")]);
        assert_eq!(r[0].state, State::Unchanged);
        assert_eq!(r[1].state, State::Absent);
        let text = render_text(&r, false);
        assert!(text.contains("HOST  unchanged\n  (no layer touched it)\n"));
    }

    #[test]
    fn odd_values_are_escaped() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(show_value(OsStr::new("a'b\nc\\")), "'a\\'b\\nc\\\\'");
        assert_eq!(show_value(OsStr::from_bytes(b"x\xff")), "'x\\xff'");
    }
}
