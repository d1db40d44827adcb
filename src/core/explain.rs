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
//! use agentenv::core::explain;
//! use agentenv::session::{self, Options};
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
//! assert_eq!((t[0].layer.level.as_deref(), t[0].line), (Some("user"), Some(1)));
//! assert_eq!((t[1].layer.level.as_deref(), t[1].action), (Some("project"), "override"));
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

use crate::core::{masking, Action, Assembly, DecidedBy, Masking, Sensitivity};
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

/// The layer a report row speaks of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRef {
    /// 1-based position of the layer in the assembly.
    pub number: usize,
    /// The layer's kind ([`crate::core::LayerKind::as_str`]).
    pub kind: &'static str,
    /// The layer's level, if it has one.
    pub level: Option<String>,
    /// The layer's file, if it has one.
    pub file: Option<String>,
}

impl LayerRef {
    /// Layer `i` (0-based) of `a`.
    fn of(a: &Assembly, i: usize) -> LayerRef {
        let info = &a.layers()[i].info;
        LayerRef {
            number: i + 1,
            kind: info.kind.as_str(),
            level: info.level.clone(),
            file: info.path_text(),
        }
    }

    /// The text columns every row starts with: `#N`, kind, level (`-`
    /// when none).
    fn cells(&self) -> [String; 3] {
        [
            format!("#{}", self.number),
            self.kind.to_string(),
            self.level.clone().unwrap_or_else(|| "-".into()),
        ]
    }

    /// The JSON keys every row starts with: `layer`, `kind`, `level`,
    /// `file`; then `rest`'s, in order.
    fn json_with(&self, rest: Value) -> Value {
        let mut m = Map::new();
        m.insert("layer".into(), json!(self.number));
        m.insert("kind".into(), json!(self.kind));
        m.insert("level".into(), json!(self.level));
        m.insert("file".into(), json!(self.file));
        if let Value::Object(rest) = rest {
            m.extend(rest);
        }
        Value::Object(m)
    }
}

/// One layer's touch of one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TouchReport {
    /// The layer.
    pub layer: LayerRef,
    /// `set`, `override`, `unset` or `skipped`.
    pub action: &'static str,
    /// Why a value was skipped (never a value).
    pub reason: Option<String>,
    /// The source line, when the layer has lines.
    pub line: Option<u32>,
    /// Where inside the layer, when the source records more than a file
    /// and a line (a harness: `base` or `root` file, and the field); never
    /// a value. `None` from [`report`]; a caller that knows more fills it.
    pub detail: Option<String>,
}

/// A variable that a value read (a `${X}` reference), and where that
/// variable came from. Never a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadReport {
    /// The variable read.
    pub name: String,
    /// Where it came from (`host env`, `env file`, …), or why it read
    /// nothing (`unset (expands to empty)`).
    pub from: String,
    /// The file that set it, when one did (an `--env-file`).
    pub file: Option<String>,
    /// That file's line.
    pub line: Option<u32>,
}

/// Everything `explain` says about one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarReport {
    /// The variable's name.
    pub name: OsString,
    /// The map the variable belongs to, when one view explains several
    /// (a harness: `runner_env`, `env.runner`, …). `None` from [`report`].
    pub scope: Option<String>,
    /// Its final state relative to the base.
    pub state: State,
    /// The final value (present when the variable exists at the end).
    pub value: Option<OsString>,
    /// Every layer that touched it, in order.
    pub touches: Vec<TouchReport>,
    /// The variables the final value read, when the source tracks them
    /// (`None` from [`report`]: a session's layers do not say).
    pub reads: Option<Vec<ReadReport>>,
    /// Public or sensitive, who decided, the description (`None` from
    /// [`report`]; a session fills it for each variable with a final
    /// value, see `Session::sensitivity`).
    pub sensitivity: Option<Sensitivity>,
}

/// A layer that failed as a whole and contributed nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedLayer {
    /// The layer.
    pub layer: LayerRef,
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
                layer: LayerRef::of(a, i),
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
            let (action, reason) = match &t.action {
                Action::Skipped(r) => (t.action.as_str(), Some(r.clone())),
                a => (a.as_str(), None),
            };
            TouchReport {
                layer: LayerRef::of(a, t.layer),
                action,
                reason,
                line: t.line,
                detail: None,
            }
        })
        .collect();
    VarReport {
        value: fin.map(OsStr::to_os_string),
        name,
        scope: None,
        state,
        touches,
        reads: None,
        sensitivity: None,
    }
}

/// Did a layer set the variable (its last set or override)?
fn layer_set(r: &VarReport) -> bool {
    r.touches
        .iter()
        .any(|t| t.action == "set" || t.action == "override")
}

/// Why the variable is public or sensitive, in words (never a value).
fn sensitivity_text(r: &VarReport, s: &Sensitivity) -> String {
    let why = match &s.decided_by {
        DecidedBy::Agentenv if s.public => "computed by agentenv".to_string(),
        DecidedBy::Agentenv => "a proxy URL with a user or password".to_string(),
        DecidedBy::Declaration { .. } => format!("declared in {}", s.decided_by),
        DecidedBy::Store(dir) => format!("set by {}, not declared public", dir.display()),
        DecidedBy::Base => {
            return "not public: the base environment's value (agentenv does not mask it)".into()
        }
    };
    let mut out = format!("{}: {why}", s.word());
    if let Some(why) = not_masked(r, s).and_then(Masking::reason) {
        out.push_str("; ");
        out.push_str(why);
    }
    out
}

/// A sensitive value a layer set that is not masked, and why
/// ([`crate::core::masking`]: under 4 bytes; or only sensitive by default
/// and under 8 bytes, a number or a boolean/null word).
fn not_masked(r: &VarReport, s: &Sensitivity) -> Option<Masking> {
    use std::os::unix::ffi::OsStrExt;
    if s.public || !layer_set(r) {
        return None;
    }
    let v = r.value.as_ref()?;
    Some(masking(v.as_bytes(), s.declared_sensitive)).filter(|m| !m.is_masked())
}

/// A description for display: control characters escaped.
fn show_description(d: &str) -> String {
    d.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
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
    match (&t.layer.file, t.line) {
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
/// action; then, when the report has a sensitivity, a line
/// `public: …`/`sensitive: …` saying who decided (`; too short to mask`
/// for a sensitive value under 4 bytes) and a `description: …` line when
/// a declaration gave one. Column widths are shared by the whole output.
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
                let [n, kind, level] = f.layer.cells();
                [
                    n,
                    kind,
                    level,
                    f.layer.file.clone().unwrap_or_else(|| "-".into()),
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
                    let [n, kind, level] = t.layer.cells();
                    [n, kind, level, location(t), action_text(t)]
                })
                .collect()
        })
        .collect();
    // The action column is padded only when some touch has a detail
    // after it (a session's never do: its rows end at the action).
    let details = reports
        .iter()
        .flat_map(|r| &r.touches)
        .any(|t| t.detail.is_some());
    let cols = if details { 5 } else { 4 };
    let mut w = [0usize; 5];
    for row in rows.iter().flatten() {
        for (i, cell) in row.iter().take(cols).enumerate() {
            w[i] = w[i].max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for (i, (r, rows)) in reports.iter().zip(&rows).enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&r.name.to_string_lossy());
        if let Some(scope) = &r.scope {
            out.push_str(" [");
            out.push_str(scope);
            out.push(']');
        }
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
        for (row, t) in rows.iter().zip(&r.touches) {
            out.push_str("  ");
            for (c, cell) in row.iter().enumerate() {
                out.push_str(cell);
                if c < 4 || t.detail.is_some() {
                    let pad = w[c] - cell.chars().count() + 2;
                    out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if let Some(d) = &t.detail {
                out.push_str(d);
            }
            out.push('\n');
        }
        for read in r.reads.iter().flatten() {
            out.push_str("  reads $");
            out.push_str(&read.name);
            out.push_str(" from ");
            out.push_str(&read.from);
            if let Some(f) = &read.file {
                out.push(' ');
                out.push_str(f);
                if let Some(l) = read.line {
                    out.push_str(&format!(":{l}"));
                }
            }
            out.push('\n');
        }
        if let Some(s) = &r.sensitivity {
            out.push_str("  ");
            out.push_str(&sensitivity_text(r, s));
            out.push('\n');
            if let Some(d) = &s.description {
                out.push_str("  description: ");
                out.push_str(&show_description(d));
                out.push('\n');
            }
        }
    }
    out
}

/// JSON: `{"variables": {...}, "failed_layers": [...]}`. `variables` is
/// keyed by variable name (in report order), each with `state`, `value`
/// (only with `show_values`; `null` when absent) and `touches` (`layer`,
/// `kind`, `level`, `file`, `line`, `action`, `reason`, and `detail` when
/// the touch has one), then `reads` (`name`, `from`, `file`, `line`) when
/// the report tracks them, then — when the report has a sensitivity —
/// `sensitivity` (`"public"` or `"sensitive"`), `description` (or `null`),
/// `decided_by` (`kind`: `agentenv`, `declaration`, `store` or `base`;
/// `path`: the `agentenv.toml` or the store's directory, or `null`; `line`:
/// the declaration's line, or `null`), `too_short_to_mask` (a sensitive
/// value a layer set, under 4 bytes), `masked` (a sensitive value a layer
/// set that the masker masks) and `not_masked` (why such a value is not
/// masked, e.g. "not masked: a number; declare sensitive = true to mask
/// it", else `null`). Reports with a scope are grouped: `variables`
/// is then keyed by scope, then by name. `failed_layers` lists `layer`,
/// `kind`, `level`, `file`, `reason`.
pub fn render_json(reports: &[VarReport], failed: &[FailedLayer], show_values: bool) -> String {
    let mut s = serde_json::to_string_pretty(&Value::Object(to_json(reports, failed, show_values)))
        .unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// [`render_json`]'s object, for a caller that adds keys of its own.
pub fn to_json(
    reports: &[VarReport],
    failed: &[FailedLayer],
    show_values: bool,
) -> Map<String, Value> {
    let scoped = reports.iter().any(|r| r.scope.is_some());
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
                let mut v = t.layer.json_with(json!({
                    "line": t.line,
                    "action": t.action,
                    "reason": t.reason,
                }));
                if let (Some(d), Value::Object(m)) = (&t.detail, &mut v) {
                    m.insert("detail".into(), json!(d));
                }
                v
            })
            .collect();
        o.insert("touches".into(), Value::Array(touches));
        if let Some(reads) = &r.reads {
            let reads = reads
                .iter()
                .map(|x| json!({"name": x.name, "from": x.from, "file": x.file, "line": x.line}))
                .collect();
            o.insert("reads".into(), Value::Array(reads));
        }
        if let Some(s) = &r.sensitivity {
            let (kind, path, line) = match &s.decided_by {
                DecidedBy::Agentenv => ("agentenv", None, None),
                DecidedBy::Declaration { file, line } => ("declaration", Some(file), Some(*line)),
                DecidedBy::Store(dir) => ("store", Some(dir), None),
                DecidedBy::Base => ("base", None, None),
            };
            o.insert("sensitivity".into(), json!(s.word()));
            o.insert("description".into(), json!(s.description));
            o.insert(
                "decided_by".into(),
                json!({
                    "kind": kind,
                    "path": path.map(|p| p.to_string_lossy()),
                    "line": line,
                }),
            );
            let not = not_masked(r, s);
            o.insert(
                "too_short_to_mask".into(),
                json!(not == Some(Masking::TooShort)),
            );
            o.insert(
                "masked".into(),
                json!(!s.public && layer_set(r) && r.value.is_some() && not.is_none()),
            );
            o.insert("not_masked".into(), json!(not.and_then(Masking::reason)));
        }
        let name = r.name.to_string_lossy().into_owned();
        if scoped {
            let group = vars
                .entry(r.scope.clone().unwrap_or_default())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(g) = group {
                g.insert(name, Value::Object(o));
            }
        } else {
            vars.insert(name, Value::Object(o));
        }
    }
    let failed: Vec<Value> = failed
        .iter()
        .map(|f| f.layer.json_with(json!({ "reason": f.reason })))
        .collect();
    let mut top = Map::new();
    top.insert("variables".into(), Value::Object(vars));
    top.insert("failed_layers".into(), Value::Array(failed));
    top
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{ChangeSet, Env, LayerInfo, LayerKind};

    fn sample() -> Assembly {
        let base =
            crate::core::env_of(&[("PATH", "/usr/bin"), ("GONE", "secret-gone"), ("HOST", "h")]);
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
        assert_eq!(f[0].layer.number, 4);
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
    fn scope_detail_and_reads_render_when_present() {
        let mut a = Assembly::new(Env::new());
        for (level, line) in [("top", 3), ("overlays[0]", 9)] {
            let l = a.add_layer(
                LayerInfo::new(LayerKind::Harness)
                    .with_path("/h/x.yaml")
                    .with_level(level),
            );
            let mut cs = ChangeSet::new();
            cs.set_at("K", "${TOK}", line);
            a.apply(l, &cs);
        }
        let mut r = report(&a, &[OsString::from("K")]);
        r[0].scope = Some("env.runner".into());
        r[0].touches[0].detail = Some("base".into());
        r[0].reads = Some(vec![
            ReadReport {
                name: "TOK".into(),
                from: "env file".into(),
                file: Some("/e.env".into()),
                line: Some(2),
            },
            ReadReport {
                name: "NOPE".into(),
                from: "unset (expands to empty)".into(),
                file: None,
                line: None,
            },
        ]);
        r[0].value = Some("s3cr3t".into());
        let text = render_text(&r, false);
        assert_eq!(
            text,
            "\
K [env.runner]  set
  #1  harness  top          /h/x.yaml:3  set       base
  #2  harness  overlays[0]  /h/x.yaml:9  override
  reads $TOK from env file /e.env:2
  reads $NOPE from unset (expands to empty)
"
        );
        let j: Value = serde_json::from_str(&render_json(&r, &[], false)).unwrap();
        let k = &j["variables"]["env.runner"]["K"];
        assert_eq!(k["touches"][0]["detail"], "base");
        assert!(k["touches"][1].get("detail").is_none());
        assert_eq!(k["reads"][0]["file"], "/e.env");
        assert_eq!(k["reads"][1]["line"], Value::Null);
        assert!(!render_json(&r, &[], false).contains("s3cr3t"));
        // An unscoped report without reads keeps the session's shape.
        let plain = report(&a, &[]);
        let j: Value = serde_json::from_str(&render_json(&plain, &[], false)).unwrap();
        assert!(j["variables"]["K"]["reads"].is_null());
        assert!(j["variables"]["K"]["touches"][0].get("detail").is_none());
    }

    #[test]
    fn sensitivity_lines_say_who_decided_never_the_value() {
        let a = sample();
        let mut r = report(&a, &[OsString::from("TOKEN"), OsString::from("PATH")]);
        let decl = |public, line| Sensitivity {
            public,
            description: Some("a token\x1b[2J".into()),
            decided_by: DecidedBy::Declaration {
                file: "/u/.agents/agentenv.toml".into(),
                line,
            },
            // `sensitive = true`: masked although only 6 bytes.
            declared_sensitive: true,
        };
        r[0].sensitivity = Some(decl(false, 3));
        r[1].sensitivity = Some(Sensitivity {
            public: true,
            description: None,
            decided_by: DecidedBy::Agentenv,
            declared_sensitive: false,
        });
        let text = render_text(&r, false);
        assert!(text.contains(
            "  sensitive: declared in /u/.agents/agentenv.toml:3\n  description: a token\\u{1b}[2J\n"
        ), "{text}");
        assert!(text.contains("  public: computed by agentenv\n"), "{text}");
        assert!(!text.contains("s3cr3t"));
        let j: Value = serde_json::from_str(&render_json(&r, &[], false)).unwrap();
        assert_eq!(j["variables"]["TOKEN"]["sensitivity"], "sensitive");
        assert_eq!(
            j["variables"]["TOKEN"]["decided_by"],
            json!({"kind": "declaration", "path": "/u/.agents/agentenv.toml", "line": 3})
        );
        assert_eq!(j["variables"]["PATH"]["decided_by"]["kind"], "agentenv");
        // A short sensitive value a layer set; the base's own value.
        let mut short = report(&a, &[OsString::from("TOKEN"), OsString::from("HOST")]);
        short[0].value = Some("ab".into());
        short[0].sensitivity = Some(Sensitivity {
            public: false,
            description: None,
            decided_by: DecidedBy::Store("/u/.agents".into()),
            declared_sensitive: false,
        });
        short[1].sensitivity = Some(Sensitivity {
            public: false,
            description: None,
            decided_by: DecidedBy::Base,
            declared_sensitive: false,
        });
        let text = render_text(&short, false);
        assert!(text
            .contains("  sensitive: set by /u/.agents, not declared public; too short to mask\n"));
        assert!(text
            .contains("  not public: the base environment's value (agentenv does not mask it)\n"));
        let j: Value = serde_json::from_str(&render_json(&short, &[], false)).unwrap();
        assert_eq!(j["variables"]["TOKEN"]["too_short_to_mask"], true);
        assert_eq!(j["variables"]["HOST"]["too_short_to_mask"], false);
        // Masked or not: a number, a word, a short value only sensitive by
        // default; the same declared `sensitive = true` is masked.
        for (value, declared, why) in [
            (
                "3000",
                false,
                Some("not masked: a number; declare sensitive = true to mask it"),
            ),
            (
                "TRUE",
                false,
                Some("not masked: a boolean or null word; declare sensitive = true to mask it"),
            ),
            (
                "abcdefg",
                false,
                Some("not masked: shorter than 8 bytes; declare sensitive = true to mask it"),
            ),
            ("abcdefgh", false, None),
            ("3000", true, None),
        ] {
            short[0].value = Some(value.into());
            short[0].sensitivity = Some(Sensitivity {
                public: false,
                description: None,
                decided_by: DecidedBy::Store("/u/.agents".into()),
                declared_sensitive: declared,
            });
            let text = render_text(&short[..1], false);
            let want = match why {
                Some(w) => format!("  sensitive: set by /u/.agents, not declared public; {w}\n"),
                None => "  sensitive: set by /u/.agents, not declared public\n".to_string(),
            };
            assert!(text.contains(&want), "{text}");
            assert!(!text.contains(value) || value == "TRUE" && !text.contains("'TRUE'"));
            let j: Value = serde_json::from_str(&render_json(&short[..1], &[], false)).unwrap();
            assert_eq!(j["variables"]["TOKEN"]["not_masked"], json!(why));
            assert_eq!(j["variables"]["TOKEN"]["masked"], why.is_none());
        }
    }

    #[test]
    fn odd_values_are_escaped() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(show_value(OsStr::new("a'b\nc\\")), "'a\\'b\\nc\\\\'");
        assert_eq!(show_value(OsStr::from_bytes(b"x\xff")), "'x\\xff'");
    }
}
