//! [`Assembly`]: a base environment, the layers applied to it in order, the
//! resulting change set, and per key every layer that touched it.

use super::{ChangeSet, Env};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::PathBuf;

/// What kind of source a layer is. Shown by `explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// Session: the agent identity variables (`AGENTS_AGENT`, …).
    Identity,
    /// Session: the store and project root variables.
    Roots,
    /// Session: the interpreter pin (`AGENTS_PYTHON`).
    Interpreter,
    /// Session: the stores' `bin` directories on `PATH`.
    BinPaths,
    /// Session: the stores' `lib` directories.
    LibPaths,
    /// Session: one overlay's root variable.
    OverlayRoot,
    /// Session: an executed `env.py` file.
    EnvScript,
    /// Session: a sourced plain env file.
    PlainFile,
    /// Session: the proxy model's variables.
    Proxy,
    /// A dotenv file (`launch`'s `.env`/`.env.local`, `harness --env-file`).
    DotenvFile,
    /// A harness block (`runner_env`, `env.runner`, the `run` child's rules).
    Harness,
    /// A layer with no file behind it (`launch --no-env`).
    Literal,
}

impl LayerKind {
    /// The name `explain` shows (`"env.py"`, `"dotenv file"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LayerKind::Identity => "identity",
            LayerKind::Roots => "roots",
            LayerKind::Interpreter => "interpreter",
            LayerKind::BinPaths => "bin paths",
            LayerKind::LibPaths => "lib paths",
            LayerKind::OverlayRoot => "overlay root",
            LayerKind::EnvScript => "env.py",
            LayerKind::PlainFile => "plain file",
            LayerKind::Proxy => "proxy",
            LayerKind::DotenvFile => "dotenv file",
            LayerKind::Harness => "harness",
            LayerKind::Literal => "literal",
        }
    }
}

impl fmt::Display for LayerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Identity of one layer: its kind, the file it came from and its level
/// (`system`, `user`, `project`, an overlay's directory name, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerInfo {
    /// What kind of source the layer is.
    pub kind: LayerKind,
    /// The file the layer came from, if any.
    pub path: Option<PathBuf>,
    /// The level or block the layer stands for, if any.
    pub level: Option<String>,
}

impl LayerInfo {
    /// A layer of `kind` with no path and no level.
    pub fn new(kind: LayerKind) -> Self {
        LayerInfo {
            kind,
            path: None,
            level: None,
        }
    }
    /// The same layer, from `path`.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = Some(path.into());
        self
    }
    /// The same layer, at `level`.
    pub fn with_level(mut self, level: impl Into<String>) -> Self {
        self.level = Some(level.into());
        self
    }
    /// The layer's file as text (lossy), for reports.
    pub fn path_text(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.to_string_lossy().into_owned())
    }
}

/// What a layer did to one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The key was not in the accumulated environment and the layer set it.
    Set,
    /// The key was present and the layer set it (maybe to the same value).
    Override,
    /// The layer removed the key.
    Unset,
    /// The layer had a value for the key but did not apply it; the reason
    /// never contains a value.
    Skipped(String),
}

impl Action {
    /// The word `explain` and `launch -vv` show: `set`, `override`,
    /// `unset` or `skipped` (the reason is [`Action::Skipped`]'s own).
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::Set => "set",
            Action::Override => "override",
            Action::Unset => "unset",
            Action::Skipped(_) => "skipped",
        }
    }
}

/// One layer's touch of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// Index into [`Assembly::layers`].
    pub layer: usize,
    /// What the layer did.
    pub action: Action,
    /// The source line that set the key, when the layer has lines.
    pub line: Option<u32>,
    /// An override that set the value the key already had (so the value's
    /// origin is an earlier layer's, or the base's).
    pub unchanged: bool,
}

/// A layer as recorded by the assembly, with its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRecord {
    /// The layer as it was added.
    pub info: LayerInfo,
    /// `None` when the layer applied; otherwise why it contributed nothing.
    pub failure: Option<String>,
}

/// How loud a [`Note`] is. The library never prints; a caller (the CLI)
/// decides which levels to show (`-q` hides warnings, `-v` shows info,
/// `-vv` debug).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Shown unless `-q`.
    Warning,
    /// Shown with `-v`.
    Info,
    /// Shown with `-vv`.
    Debug,
}

/// One diagnostic of a run, in the order it happened: a warning (a layer
/// failed, a value was skipped, an input was ignored), an info line (a
/// layer ran, with its time) or a debug line. The text names files, lines,
/// layers and variables, never a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// How loud it is.
    pub level: Level,
    /// The message (never a value).
    pub text: String,
}

impl Note {
    /// A warning.
    pub fn warning(text: impl Into<String>) -> Note {
        Note {
            level: Level::Warning,
            text: text.into(),
        }
    }
    /// An info line.
    pub fn info(text: impl Into<String>) -> Note {
        Note {
            level: Level::Info,
            text: text.into(),
        }
    }
    /// A debug line.
    pub fn debug(text: impl Into<String>) -> Note {
        Note {
            level: Level::Debug,
            text: text.into(),
        }
    }
}

/// Base environment + layers → result with provenance.
///
/// Application rule (the reference's): setting a key records it in the
/// result and drops it from the removals; removing a key drops it from the
/// result and records a removal **only if the key was in the base env**, so
/// a key created by one layer and removed by a later one leaves no trace.
///
/// The assembly also keeps the run's [`Note`]s in order (warnings are data:
/// whoever runs the layers records them here instead of printing).
#[derive(Debug, Clone)]
pub struct Assembly {
    base: Env,
    current: Env,
    result: ChangeSet,
    layers: Vec<LayerRecord>,
    touches: BTreeMap<OsString, Vec<Touch>>,
    notes: Vec<Note>,
}

impl Assembly {
    /// An assembly over `base`, with no layers yet.
    pub fn new(base: Env) -> Self {
        Assembly {
            current: base.clone(),
            base,
            result: ChangeSet::new(),
            layers: Vec::new(),
            touches: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// Record a diagnostic (after every one recorded so far).
    pub fn note(&mut self, note: Note) {
        self.notes.push(note);
    }

    /// Record a warning.
    pub fn warn(&mut self, text: impl Into<String>) {
        self.note(Note::warning(text));
    }

    /// Every diagnostic recorded, in order.
    pub fn notes(&self) -> &[Note] {
        &self.notes
    }

    /// The warnings among [`notes`](Self::notes), in order.
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.notes
            .iter()
            .filter(|n| n.level == Level::Warning)
            .map(|n| n.text.as_str())
    }

    /// The frozen base environment.
    pub fn base(&self) -> &Env {
        &self.base
    }

    /// The accumulated environment (base + everything applied so far).
    pub fn current(&self) -> &Env {
        &self.current
    }

    /// Everything the layers set and removed, by the application rule.
    pub fn result(&self) -> &ChangeSet {
        &self.result
    }

    /// Every layer, in the order it was added (a [`Touch::layer`] indexes
    /// this).
    pub fn layers(&self) -> &[LayerRecord] {
        &self.layers
    }

    /// Every touch of `key`, in application order.
    pub fn touches(&self, key: &OsStr) -> &[Touch] {
        self.touches.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every key some layer touched, in byte order.
    pub fn touched_keys(&self) -> impl Iterator<Item = &OsString> {
        self.touches.keys()
    }

    /// Register a layer; the returned index names it in later calls.
    pub fn add_layer(&mut self, info: LayerInfo) -> usize {
        self.layers.push(LayerRecord {
            info,
            failure: None,
        });
        self.layers.len() - 1
    }

    /// Mark a layer as failed: it contributes nothing.
    pub fn fail(&mut self, layer: usize, reason: impl Into<String>) {
        self.layers[layer].failure = Some(reason.into());
    }

    /// Record that `layer` had `key` but did not apply it.
    pub fn skip(
        &mut self,
        layer: usize,
        key: &OsStr,
        reason: impl Into<String>,
        line: Option<u32>,
    ) {
        self.touch(key, layer, Action::Skipped(reason.into()), line);
    }

    fn touch(&mut self, key: &OsStr, layer: usize, action: Action, line: Option<u32>) {
        self.touch_as(key, layer, action, line, false);
    }

    fn touch_as(
        &mut self,
        key: &OsStr,
        layer: usize,
        action: Action,
        line: Option<u32>,
        unchanged: bool,
    ) {
        self.touches
            .entry(key.to_os_string())
            .or_default()
            .push(Touch {
                layer,
                action,
                line,
                unchanged,
            });
    }

    /// Apply `changes` with the *override* policy: later wins.
    pub fn apply(&mut self, layer: usize, changes: &ChangeSet) {
        self.apply_filtered(layer, changes, |_| None);
    }

    /// Apply `changes` with the *fill* policy: a key for which `reserved`
    /// returns `true` is skipped, recorded with the caller's `reason` (which
    /// never contains a value). Returns the keys set.
    pub fn apply_fill(
        &mut self,
        layer: usize,
        changes: &ChangeSet,
        reason: &str,
        reserved: impl Fn(&OsStr) -> bool,
    ) -> Vec<OsString> {
        self.apply_filtered(layer, changes, |k| reserved(k).then_some(reason));
        changes
            .assigned()
            .keys()
            .filter(|k| !reserved(k))
            .cloned()
            .collect()
    }

    fn apply_filtered<'r>(
        &mut self,
        layer: usize,
        changes: &ChangeSet,
        skip: impl Fn(&OsStr) -> Option<&'r str>,
    ) {
        for (k, v) in changes.assigned() {
            let line = changes.line_of(k);
            if let Some(reason) = skip(k) {
                self.touch(k, layer, Action::Skipped(reason.to_string()), line);
                continue;
            }
            let (action, unchanged) = match self.current.get(k) {
                Some(old) => (Action::Override, old == v),
                None => (Action::Set, false),
            };
            self.current.insert(k.clone(), v.clone());
            self.result.set_maybe_at(k.clone(), v.clone(), line);
            self.touch_as(k, layer, action, line, unchanged);
        }
        for k in changes.removed() {
            if let Some(reason) = skip(k) {
                self.touch(k, layer, Action::Skipped(reason.to_string()), None);
                continue;
            }
            self.current.remove(k);
            if self.base.contains_key(k) {
                self.result.remove(k.clone());
            } else {
                self.result.forget(k);
            }
            self.touch(k, layer, Action::Unset, None);
        }
    }

    /// Only what differs from the base: set keys that are new or whose value
    /// changed (with the line that set them), plus removals (all of which are
    /// base keys by construction). [`ChangeSet::diff_from`] is the rule.
    pub fn diff(&self) -> ChangeSet {
        self.result.diff_from(&self.base)
    }

    /// The final state of `key`: its value, or `None` when it is absent.
    pub fn final_value(&self, key: &OsStr) -> Option<&OsStr> {
        self.current.get(key).map(|v| v.as_os_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::env_of as env;

    fn cs(set: &[(&str, &str)], removed: &[&str]) -> ChangeSet {
        let mut c = ChangeSet::new();
        for (k, v) in set {
            c.set(*k, *v);
        }
        for k in removed {
            c.remove(*k);
        }
        c
    }

    #[test]
    fn later_layer_wins_and_current_accumulates() {
        let mut a = Assembly::new(env(&[("A", "0")]));
        let l1 = a.add_layer(LayerInfo::new(LayerKind::Literal));
        let l2 = a.add_layer(LayerInfo::new(LayerKind::Literal));
        a.apply(l1, &cs(&[("A", "1"), ("B", "1")], &[]));
        a.apply(l2, &cs(&[("A", "2")], &[]));
        assert_eq!(a.result().get("A"), Some(OsStr::new("2")));
        assert_eq!(a.current().get(OsStr::new("B")).unwrap(), "1");
        let t = a.touches(OsStr::new("A"));
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].action, Action::Override);
        assert_eq!(t[1].layer, l2);
        assert_eq!(a.touches(OsStr::new("B"))[0].action, Action::Set);
    }

    #[test]
    fn removal_recorded_only_for_base_keys() {
        let mut a = Assembly::new(env(&[("BASE", "x")]));
        let l = a.add_layer(LayerInfo::new(LayerKind::Literal));
        a.apply(l, &cs(&[("NEW", "1")], &[]));
        a.apply(l, &cs(&[], &["NEW", "BASE", "NEVER"]));
        let r = a.result();
        assert!(r.assigned().is_empty());
        assert_eq!(r.removed().iter().collect::<Vec<_>>(), vec!["BASE"]);
        assert!(a.current().is_empty());
    }

    #[test]
    fn set_after_removal_leaves_removed() {
        let mut a = Assembly::new(env(&[("K", "x")]));
        let l = a.add_layer(LayerInfo::new(LayerKind::Literal));
        a.apply(l, &cs(&[], &["K"]));
        a.apply(l, &cs(&[("K", "y")], &[]));
        assert!(a.result().removed().is_empty());
        assert_eq!(a.result().get("K"), Some(OsStr::new("y")));
    }

    #[test]
    fn diff_drops_values_equal_to_base() {
        let mut a = Assembly::new(env(&[("SAME", "v"), ("GONE", "g")]));
        let l = a.add_layer(LayerInfo::new(LayerKind::Literal));
        a.apply(l, &cs(&[("SAME", "v"), ("CHANGED", "c")], &["GONE"]));
        // The full result records the same-value set; the diff does not.
        assert!(a.result().get("SAME").is_some());
        let d = a.diff();
        assert_eq!(d.assigned().keys().collect::<Vec<_>>(), vec!["CHANGED"]);
        assert_eq!(d.removed().iter().collect::<Vec<_>>(), vec!["GONE"]);
    }

    #[test]
    fn fill_policy_skips_reserved_keys() {
        let mut a = Assembly::new(env(&[("HOST", "h")]));
        let l = a.add_layer(LayerInfo::new(LayerKind::DotenvFile));
        let applied = a.apply_fill(
            l,
            &cs(&[("HOST", "file"), ("GAP", "g")], &[]),
            "the caller's reason",
            |k| k == "HOST",
        );
        assert_eq!(applied, vec![OsString::from("GAP")]);
        assert_eq!(a.current().get(OsStr::new("HOST")).unwrap(), "h");
        assert_eq!(
            a.touches(OsStr::new("HOST"))[0].action,
            Action::Skipped("the caller's reason".into())
        );
    }

    #[test]
    fn result_and_diff_keep_the_line_of_the_last_setter() {
        let mut a = Assembly::new(env(&[("OLD", "o")]));
        let l1 = a.add_layer(LayerInfo::new(LayerKind::DotenvFile));
        let l2 = a.add_layer(LayerInfo::new(LayerKind::Literal));
        let mut c = ChangeSet::new();
        c.set_at("OLD", "x", 2);
        c.set_at("NEW", "n", 5);
        a.apply(l1, &c);
        assert_eq!(a.result().line_of(OsStr::new("NEW")), Some(5));
        assert_eq!(a.diff().line_of(OsStr::new("OLD")), Some(2));
        // A later layer without a line: the old line no longer describes it.
        a.apply(l2, &cs(&[("OLD", "y")], &[]));
        assert_eq!(a.diff().line_of(OsStr::new("OLD")), None);
        assert_eq!(a.diff().line_of(OsStr::new("NEW")), Some(5));
    }

    #[test]
    fn notes_keep_their_order_and_level() {
        let mut a = Assembly::new(Env::new());
        a.warn("first");
        a.note(Note::info("second"));
        a.note(Note::debug("third"));
        a.warn("fourth");
        let texts: Vec<&str> = a.notes().iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts, ["first", "second", "third", "fourth"]);
        assert_eq!(a.notes()[1].level, Level::Info);
        assert_eq!(a.warnings().collect::<Vec<_>>(), ["first", "fourth"]);
    }

    #[test]
    fn failed_layer_is_recorded() {
        let mut a = Assembly::new(Env::new());
        let l = a.add_layer(LayerInfo::new(LayerKind::EnvScript).with_path("/x/env.py"));
        a.fail(l, "exit 3");
        assert_eq!(a.layers()[l].failure.as_deref(), Some("exit 3"));
        assert!(a.result().is_empty());
    }
}
