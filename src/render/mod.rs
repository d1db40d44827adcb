//! Renderers: turn a [`View`] (sorted assignments and removals) into the
//! text of one of eight formats, exactly as the reference prints them.
//!
//! Renderers are pure functions. Building the view (full or diff mode) is
//! done by [`View::full`] / [`View::diff`]; rendering never looks at the
//! process environment.
//
// OWNER: renderer work (issue 2, point 4). Interface fixed: `Format`,
// `FormatChoice`, `parse_format`, `View`, `render`, `detect_auto`.

use crate::core::{ChangeSet, Env};
use std::ffi::{OsStr, OsString};

/// A canonical output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Export,
    Dotenv,
    Powershell,
    Cmd,
    Fish,
    Json,
    Ini,
    Yaml,
}

/// What `--format` said: `auto`, or a name (kept as given, since the cache
/// key distinguishes aliases) with its canonical format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatChoice {
    Auto,
    Named { given: &'static str, format: Format },
}

/// Every accepted `--format` value, sorted (as the reference lists them).
pub const ACCEPTED: &[&str] = &[
    "auto",
    "bash",
    "bat",
    "batch",
    "cmd",
    "dotenv",
    "env",
    "export",
    "fish",
    "ini",
    "json",
    "posix",
    "powershell",
    "ps",
    "pwsh",
    "sh",
    "yaml",
];

/// Parse a `--format` value (case-sensitive). The error is the message to
/// print after `error: `.
pub fn parse_format(_value: &str) -> Result<FormatChoice, String> {
    todo!("renderer work")
}

/// The format `auto` resolves to on this host (parent process name, then
/// `$SHELL`, else export).
pub fn detect_auto() -> Format {
    todo!("renderer work")
}

/// What a renderer prints: assignments sorted by name (byte order) and
/// removals sorted by name. `diff_base_path` is the base env's `PATH`, given
/// only in diff mode (it enables export's `${PATH:+:$PATH}` short form).
#[derive(Debug, Clone, Default)]
pub struct View {
    pub assignments: Vec<(OsString, OsString)>,
    pub removals: Vec<OsString>,
    pub diff_base_path: Option<OsString>,
}

impl View {
    /// Diff mode: what differs from `base` plus removals.
    /// `changes` is the assembly's result (not yet diffed).
    pub fn diff(_base: &Env, _changes: &ChangeSet) -> View {
        todo!("renderer work")
    }

    /// Full mode: `base` minus names starting with `hide_prefix` (the
    /// session job hides inherited `DOTAGENTS_*`) minus removed names, then
    /// every name the changes set; removals are rendered too.
    pub fn full(_base: &Env, _changes: &ChangeSet, _hide_prefix: Option<&str>) -> View {
        todo!("renderer work")
    }

    /// Just these assignments, no removals (e.g. `dotenv parse`).
    pub fn of(_vars: impl IntoIterator<Item = (OsString, OsString)>) -> View {
        todo!("renderer work")
    }
}

/// Render `view` in `format`, including the final newline.
pub fn render(_format: Format, _view: &View) -> String {
    todo!("renderer work")
}

#[allow(dead_code)]
fn _uses(_: &OsStr) {}
