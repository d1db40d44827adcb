//! Renderers: turn a [`View`] (sorted assignments and removals) into the
//! text of one of eight formats, exactly as the reference prints them.
//!
//! Renderers are pure functions. Building the view (full or diff mode) is
//! done by [`View::full`] / [`View::diff`]; rendering never looks at the
//! process environment.

pub(crate) mod data;
mod detect;
mod own;
mod pystr;
mod shell;

pub use own::{github_delimiter, Omission, DOCKER_MAX_LINE};
pub(crate) use pystr::py_repr;
// The masker (`crate::mask`) derives the export format's quoted form.

use crate::core::{ChangeSet, Env};
use std::collections::BTreeMap;
use std::ffi::OsString;

/// A canonical output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// POSIX shells: `export K='v'` and `unset K`.
    Export,
    /// A dotenv file.
    Dotenv,
    /// PowerShell: `${env:K} = 'v'`.
    Powershell,
    /// cmd.exe: `set "K=v"`.
    Cmd,
    /// fish: `set -gx K 'v'`.
    Fish,
    /// A JSON object (`null` for a removal).
    Json,
    /// An INI `[env]` section.
    Ini,
    /// A YAML mapping.
    Yaml,
    /// agentenv's own: the `$GITHUB_ENV` file of GitHub Actions.
    Github,
    /// agentenv's own: the `--env-file` of `docker run`.
    Docker,
}

/// What `--format` said: `auto`, or a name (kept as given, since the cache
/// key distinguishes aliases) with its canonical format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatChoice {
    /// `auto`: detect the calling shell ([`detect_auto`]).
    Auto,
    /// A format by one of its names.
    Named {
        /// The name as given (`bash`, `sh`, `export`, …).
        given: &'static str,
        /// The format it stands for.
        format: Format,
    },
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

/// agentenv's own `--format` values (no reference has them), sorted.
pub const OWN: &[&str] = &["docker", "github"];

/// A `--format` value that is not accepted. `Display` is the reference's
/// message (the accepted names and the value given, as Python's `repr`),
/// then agentenv's own formats; the value is the user's argument, never a
/// variable's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFormat {
    given: String,
}

impl UnknownFormat {
    /// The value given.
    pub fn given(&self) -> &str {
        &self.given
    }
}

impl std::fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "--format must be one of {} (got {}); agentenv's own: {}",
            ACCEPTED.join(", "),
            py_repr(&self.given),
            OWN.join(", ")
        )
    }
}

impl std::error::Error for UnknownFormat {}

/// Parse a `--format` value (case-sensitive).
pub fn parse_format(value: &str) -> Result<FormatChoice, UnknownFormat> {
    let format = match value {
        "auto" => return Ok(FormatChoice::Auto),
        "export" | "posix" | "sh" | "bash" => Format::Export,
        "dotenv" | "env" => Format::Dotenv,
        "powershell" | "pwsh" | "ps" => Format::Powershell,
        "cmd" | "bat" | "batch" => Format::Cmd,
        "fish" => Format::Fish,
        "json" => Format::Json,
        "ini" => Format::Ini,
        "yaml" => Format::Yaml,
        "github" => Format::Github,
        "docker" => Format::Docker,
        _ => {
            return Err(UnknownFormat {
                given: value.to_string(),
            })
        }
    };
    let given = ACCEPTED
        .iter()
        .chain(OWN)
        .copied()
        .find(|a| *a == value)
        .expect("every alias is in ACCEPTED or OWN");
    Ok(FormatChoice::Named { given, format })
}

impl Format {
    /// The canonical name (`export`, `dotenv`, …).
    pub fn name(self) -> &'static str {
        match self {
            Format::Export => "export",
            Format::Dotenv => "dotenv",
            Format::Powershell => "powershell",
            Format::Cmd => "cmd",
            Format::Fish => "fish",
            Format::Json => "json",
            Format::Ini => "ini",
            Format::Yaml => "yaml",
            Format::Github => "github",
            Format::Docker => "docker",
        }
    }

    /// agentenv's own formats.
    pub const OWN: [Format; 2] = [Format::Github, Format::Docker];

    /// Every canonical format of the reference.
    pub const ALL: [Format; 8] = [
        Format::Export,
        Format::Dotenv,
        Format::Powershell,
        Format::Cmd,
        Format::Fish,
        Format::Json,
        Format::Ini,
        Format::Yaml,
    ];
}

impl FormatChoice {
    /// The canonical format, detecting the parent shell for `auto`.
    pub fn resolve(self) -> Format {
        match self {
            FormatChoice::Auto => detect_auto(),
            FormatChoice::Named { format, .. } => format,
        }
    }

    /// The format `env` renders: with `--into` (`into`) the export format
    /// only — `auto` means export whatever shell is detected, another
    /// named format is refused (before any layer runs).
    pub fn resolve_for(self, into: bool) -> Result<Format, String> {
        match self {
            _ if !into => Ok(self.resolve()),
            FormatChoice::Auto => Ok(Format::Export),
            FormatChoice::Named { format, .. } if format == Format::Export => Ok(format),
            FormatChoice::Named { format, .. } => Err(format!(
                "--into writes the export format only, not '{}'",
                format.name()
            )),
        }
    }

    /// The format's name as given (`resolved`'s for `auto`): what the
    /// cache key holds.
    pub fn given_name(self, resolved: Format) -> &'static str {
        match self {
            FormatChoice::Auto => resolved.name(),
            FormatChoice::Named { given, .. } => given,
        }
    }
}

/// The format `auto` resolves to on this host (parent process name, then
/// `$SHELL`, else export).
pub fn detect_auto() -> Format {
    detect::detect()
}

/// What a renderer prints: assignments sorted by name (byte order) and
/// removals sorted by name. `diff_base_path` is the base env's `PATH`, given
/// only in diff mode (it enables export's `${PATH:+:$PATH}` short form).
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Names and values to set.
    pub assignments: Vec<(OsString, OsString)>,
    /// Names to remove.
    pub removals: Vec<OsString>,
    /// The base env's `PATH`, in diff mode only.
    pub diff_base_path: Option<OsString>,
}

impl View {
    /// Diff mode: what differs from `base` plus removals.
    /// `changes` is the assembly's result (not yet diffed).
    ///
    /// The rule is [`ChangeSet::diff_from`] (the reference's `get_diff`),
    /// sorted for printing; `diff_base_path` is the base `PATH` (empty when
    /// unset).
    pub fn diff(base: &Env, changes: &ChangeSet) -> View {
        let d = changes.diff_from(base);
        let assignments: Vec<(OsString, OsString)> = d
            .assigned()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let removals: Vec<OsString> = d.removed().iter().cloned().collect();
        let path = base.get(std::ffi::OsStr::new("PATH"));
        View::sorted(
            assignments,
            removals,
            Some(path.cloned().unwrap_or_default()),
        )
    }

    /// A view of these, each list sorted in the reference's name order.
    fn sorted(
        mut assignments: Vec<(OsString, OsString)>,
        mut removals: Vec<OsString>,
        diff_base_path: Option<OsString>,
    ) -> View {
        pystr::sort_by_name(&mut assignments, |(k, _)| k.as_encoded_bytes());
        pystr::sort_by_name(&mut removals, |k| k.as_encoded_bytes());
        View {
            assignments,
            removals,
            diff_base_path,
        }
    }

    /// Full mode: `base` minus names starting with `hide_prefix` (the
    /// session job hides inherited `DOTAGENTS_*`) minus removed names, then
    /// every name the changes set; removals are rendered too.
    pub fn full(base: &Env, changes: &ChangeSet, hide_prefix: Option<&str>) -> View {
        let hidden = |k: &OsString| {
            hide_prefix.is_some_and(|p| k.as_encoded_bytes().starts_with(p.as_bytes()))
        };
        // Merge the base (already in byte order) with the set names sorted
        // the same way; a set name replaces the base entry.
        let mut set: Vec<(&OsString, &OsString)> = changes.assigned().iter().collect();
        set.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut assignments: Vec<(OsString, OsString)> = Vec::with_capacity(base.len() + set.len());
        let mut next = set.iter().peekable();
        for (k, v) in base {
            while let Some((sk, sv)) = next.next_if(|(sk, _)| *sk < k) {
                assignments.push(((*sk).clone(), (*sv).clone()));
            }
            if let Some((sk, sv)) = next.next_if(|(sk, _)| *sk == k) {
                assignments.push(((*sk).clone(), (*sv).clone()));
                continue;
            }
            if !hidden(k) && !changes.removed().contains(k) {
                assignments.push((k.clone(), v.clone()));
            }
        }
        for (sk, sv) in next {
            assignments.push(((*sk).clone(), (*sv).clone()));
        }
        // A removed key is never also set (a `ChangeSet` promise).
        let removals: Vec<OsString> = changes.removed().iter().cloned().collect();
        View::sorted(assignments, removals, None)
    }

    /// Just these assignments, no removals (e.g. `dotenv parse`).
    /// A name given twice keeps its last value.
    pub fn of(vars: impl IntoIterator<Item = (OsString, OsString)>) -> View {
        let map: BTreeMap<OsString, OsString> = vars.into_iter().collect();
        let mut assignments: Vec<(OsString, OsString)> = map.into_iter().collect();
        pystr::sort_by_name(&mut assignments, |(k, _)| k.as_encoded_bytes());
        View {
            assignments,
            removals: Vec::new(),
            diff_base_path: None,
        }
    }
}

/// A view as the renderers consume it: names and values as bytes, sorted in
/// the reference's order, and `gone` = removals that are not also assigned
/// (the reference's `gone`), sorted and de-duplicated.
pub(crate) struct Prepared<'a> {
    pub assignments: Vec<(&'a [u8], &'a [u8])>,
    pub gone: Vec<&'a [u8]>,
    pub diff_base_path: Option<&'a [u8]>,
}

impl<'a> Prepared<'a> {
    fn new(view: &'a View) -> Self {
        let mut assignments: Vec<(&[u8], &[u8])> = view
            .assignments
            .iter()
            .map(|(k, v)| (k.as_encoded_bytes(), v.as_encoded_bytes()))
            .collect();
        if !assignments.is_sorted_by(|a, b| pystr::cmp_names(a.0, b.0).is_lt()) {
            pystr::sort_by_name(&mut assignments, |(k, _)| k);
            // A name given twice: the last one given wins (as a dict would).
            let mut dedup: Vec<(&[u8], &[u8])> = Vec::with_capacity(assignments.len());
            for (k, v) in assignments {
                match dedup.last_mut() {
                    Some(last) if last.0 == k => last.1 = v,
                    _ => dedup.push((k, v)),
                }
            }
            assignments = dedup;
        }
        let mut gone: Vec<&[u8]> = view
            .removals
            .iter()
            .map(|k| k.as_encoded_bytes())
            .filter(|k| {
                assignments
                    .binary_search_by(|(a, _)| pystr::cmp_names(a, k))
                    .is_err()
            })
            .collect();
        pystr::sort_by_name(&mut gone, |k| k);
        gone.dedup();
        Prepared {
            assignments,
            gone,
            diff_base_path: view.diff_base_path.as_ref().map(|p| p.as_encoded_bytes()),
        }
    }

    /// Assignments and removals (`None`) merged in name order (json, yaml).
    fn merged(&self) -> Vec<(&'a [u8], Option<&'a [u8]>)> {
        let mut out = Vec::with_capacity(self.assignments.len() + self.gone.len());
        let (mut a, mut g) = (
            self.assignments.iter().peekable(),
            self.gone.iter().peekable(),
        );
        loop {
            let take_a = match (a.peek(), g.peek()) {
                (Some((ka, _)), Some(kg)) => pystr::cmp_names(ka, kg).is_lt(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_a {
                let (k, v) = a.next().expect("peeked");
                out.push((*k, Some(*v)));
            } else {
                out.push((*g.next().expect("peeked"), None));
            }
        }
        out
    }
}

/// Output lines joined with `\n` (no trailing newline until [`render`]).
pub(crate) struct Lines {
    out: String,
    first: bool,
}

impl Lines {
    /// Start a new line and return the buffer to append it to.
    fn line(&mut self) -> &mut String {
        if !self.first {
            self.out.push('\n');
        }
        self.first = false;
        &mut self.out
    }
}

/// A rendering and what it had to leave out.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The text, with the final newline.
    pub text: String,
    /// Variables the format could not carry, and removals it cannot
    /// express (`github`, `docker`; always empty for the reference's
    /// formats), in output order.
    pub omitted: Vec<Omission>,
    /// Variables written exactly that a common reader of the format gives
    /// back changed (`dotenv`: a value holding a CR, which python-dotenv
    /// reading the file by path turns into LF), in output order. The text
    /// stays the reference's.
    pub altered: Vec<Omission>,
}

/// Render `view` in `format`, including the final newline. Pure: nothing
/// is printed. The reference's eight formats carry every view; `github` and
/// `docker` may leave variables out, which only [`render_checked`] reports.
pub fn render(format: Format, view: &View) -> String {
    render_checked(format, view).text
}

/// One warning line per omission of `r`, then one per variable a reader
/// gives back altered (a name, never a value), for the CLI to print.
pub(crate) fn omission_warnings(format: Format, r: &Rendered) -> Vec<String> {
    r.omitted
        .iter()
        .map(|o| {
            format!(
                "{} left out of the {} format: {}",
                shown_name(&o.name),
                format.name(),
                o.reason
            )
        })
        .chain(
            r.altered
                .iter()
                .map(|o| format!("{} {}", shown_name(&o.name), o.reason)),
        )
        .collect()
}

/// A variable's name for a log line: Python-style quoted, and cut before
/// the first `=` (a "name" like `TOKEN=ghp_…` may hold a value) or after 64
/// characters, with `…` marking the cut.
pub(crate) fn shown_name(name: &[u8]) -> String {
    let text = String::from_utf8_lossy(name);
    let cut = text
        .char_indices()
        .find(|&(i, c)| c == '=' || i >= 64)
        .map(|(i, _)| i);
    match cut {
        Some(i) => format!("{}…", py_repr(&text[..i])),
        None => py_repr(&text),
    }
}

/// The text and what the format had to leave out (pure).
pub fn render_checked(format: Format, view: &View) -> Rendered {
    let p = Prepared::new(view);
    let mut omitted = Vec::new();
    let mut altered = Vec::new();
    let estimate = view
        .assignments
        .iter()
        .map(|(k, v)| k.len() + v.len() + 16)
        .sum::<usize>()
        + 16;
    let mut lines = Lines {
        out: String::with_capacity(estimate),
        first: true,
    };
    match format {
        Format::Export => shell::export(&p, &mut lines),
        Format::Powershell => shell::powershell(&p, &mut lines),
        Format::Cmd => shell::cmd(&p, &mut lines),
        Format::Fish => shell::fish(&p, &mut lines),
        Format::Dotenv => data::dotenv(&p, &mut lines, &mut altered),
        Format::Ini => data::ini(&p, &mut lines),
        Format::Yaml => data::yaml(&p, &mut lines),
        Format::Json => data::json(&p, &mut lines.out),
        Format::Github => own::github(&p, &mut lines, &mut omitted),
        Format::Docker => own::docker(&p, &mut lines, &mut omitted),
    }
    let mut text = lines.out;
    text.push('\n');
    Rendered {
        text,
        omitted,
        altered,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn into_takes_the_export_format_only_and_the_cache_key_the_name_given() {
        let bash = parse_format("bash").unwrap();
        assert_eq!(bash.resolve_for(true), Ok(Format::Export));
        assert_eq!(bash.given_name(Format::Export), "bash");
        assert_eq!(FormatChoice::Auto.resolve_for(true), Ok(Format::Export));
        assert_eq!(FormatChoice::Auto.given_name(Format::Fish), "fish");
        let json = parse_format("json").unwrap();
        assert_eq!(json.resolve_for(false), Ok(Format::Json));
        assert_eq!(
            json.resolve_for(true),
            Err("--into writes the export format only, not 'json'".to_string())
        );
    }

    /// The names and values as `View::assignments` holds them.
    pub(crate) fn pairs(set: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        set.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    /// A view of these assignments and removals (full-mode style).
    pub(crate) fn view(set: &[(&str, &str)], removed: &[&str]) -> View {
        let mut v = View::of(pairs(set));
        v.removals = removed.iter().map(OsString::from).collect();
        v.removals.sort();
        v
    }

    /// A diff-mode view with this base PATH, built by [`View::diff`] (the
    /// one diff rule): the removed names are in the base, the set ones are
    /// given values that differ from it.
    pub(crate) fn diff_view(set: &[(&str, &str)], removed: &[&str], base_path: &str) -> View {
        let mut base = env(&[("PATH", base_path)]);
        let mut ch = ChangeSet::new();
        for (k, v) in set {
            assert!(base.get(OsStr::new(k)) != Some(&OsString::from(v)));
            ch.set(*k, *v);
        }
        for k in removed {
            base.insert(OsString::from(k), OsString::new());
            ch.remove(*k);
        }
        View::diff(&base, &ch)
    }

    use crate::core::env_of as env;

    #[test]
    fn parse_format_accepts_every_alias_case_sensitively() {
        for (given, f) in [
            ("export", Format::Export),
            ("posix", Format::Export),
            ("sh", Format::Export),
            ("bash", Format::Export),
            ("dotenv", Format::Dotenv),
            ("env", Format::Dotenv),
            ("powershell", Format::Powershell),
            ("pwsh", Format::Powershell),
            ("ps", Format::Powershell),
            ("cmd", Format::Cmd),
            ("bat", Format::Cmd),
            ("batch", Format::Cmd),
            ("fish", Format::Fish),
            ("json", Format::Json),
            ("ini", Format::Ini),
            ("yaml", Format::Yaml),
        ] {
            assert_eq!(
                parse_format(given),
                Ok(FormatChoice::Named { given, format: f })
            );
        }
        assert_eq!(parse_format("auto"), Ok(FormatChoice::Auto));
        assert_eq!(
            parse_format("JSON").unwrap_err().to_string(),
            "--format must be one of auto, bash, bat, batch, cmd, dotenv, env, export, fish, ini, json, posix, powershell, ps, pwsh, sh, yaml (got 'JSON'); agentenv's own: docker, github"
        );
        for (given, f) in [("github", Format::Github), ("docker", Format::Docker)] {
            assert_eq!(
                parse_format(given),
                Ok(FormatChoice::Named { given, format: f })
            );
            assert_eq!(f.name(), given);
        }
        assert!(parse_format("")
            .unwrap_err()
            .to_string()
            .contains("(got '');"));
        assert!(parse_format("it's")
            .unwrap_err()
            .to_string()
            .contains("(got \"it's\");"));
        let mut sorted = ACCEPTED.to_vec();
        sorted.sort();
        assert_eq!(sorted, ACCEPTED);
    }

    #[test]
    fn shown_names_stop_before_a_value() {
        assert_eq!(shown_name(b"PLAIN"), "'PLAIN'");
        assert_eq!(shown_name(b"TOKEN=ghp_x"), "'TOKEN'…");
        assert_eq!(shown_name(b"A\nB"), "'A\\nB'");
        let long = "x".repeat(70);
        assert_eq!(shown_name(long.as_bytes()), format!("'{}'…", &long[..64]));
    }

    #[test]
    fn empty_renderings() {
        let v = View::default();
        for f in [
            Format::Export,
            Format::Dotenv,
            Format::Powershell,
            Format::Cmd,
            Format::Fish,
            Format::Yaml,
        ] {
            assert_eq!(render(f, &v), "\n", "{f:?}");
        }
        assert_eq!(render(Format::Json, &v), "{}\n");
        assert_eq!(render(Format::Ini, &v), "[env]\n");
    }

    #[test]
    fn diff_view_keeps_changes_and_base_removals() {
        let base = env(&[("A", "1"), ("B", "2"), ("R", "x"), ("PATH", "/bin")]);
        let mut ch = ChangeSet::new();
        ch.set("B", "2");
        ch.set("A", "one");
        ch.set("N", "new");
        ch.remove("R");
        ch.remove("NOT_IN_BASE");
        let v = View::diff(&base, &ch);
        assert_eq!(v.assignments, pairs(&[("A", "one"), ("N", "new")]));
        assert_eq!(v.removals, vec![OsString::from("R")]);
        assert_eq!(v.diff_base_path, Some(OsString::from("/bin")));
        assert_eq!(
            View::diff(&Env::new(), &ChangeSet::new()).diff_base_path,
            Some(OsString::new())
        );
    }

    #[test]
    fn full_view_hides_prefix_and_removed() {
        let base = env(&[
            ("A", "1"),
            ("DOTAGENTS_X", "s"),
            ("DOTAGENTS_Y", "t"),
            ("R", "x"),
        ]);
        let mut ch = ChangeSet::new();
        ch.set("A", "1");
        ch.set("DOTAGENTS_Y", "set");
        ch.remove("R");
        let v = View::full(&base, &ch, Some("DOTAGENTS_"));
        assert_eq!(v.assignments, pairs(&[("A", "1"), ("DOTAGENTS_Y", "set")]));
        assert_eq!(v.removals, vec![OsString::from("R")]);
        assert_eq!(v.diff_base_path, None);
        assert_eq!(
            render(Format::Export, &v),
            "export A='1'\nexport DOTAGENTS_Y='set'\nunset R\n"
        );
        let all = View::full(&base, &ch, None);
        assert_eq!(all.assignments.len(), 3);
    }

    #[test]
    fn render_sorts_and_drops_assigned_removals() {
        let v = View {
            assignments: pairs(&[("b", "2"), ("a", "1")]),
            removals: vec![
                OsString::from("z"),
                OsString::from("a"),
                OsString::from("z"),
            ],
            diff_base_path: None,
        };
        assert_eq!(
            render(Format::Json, &v),
            "{\n  \"a\": \"1\",\n  \"b\": \"2\",\n  \"z\": null\n}\n"
        );
    }

    #[test]
    fn view_of_sorts() {
        let v = View::of([
            (OsString::from("B"), OsString::from("2")),
            (OsString::from("A"), OsString::from("1")),
        ]);
        assert_eq!(render(Format::Dotenv, &v), "A=1\nB=2\n");
    }
}
