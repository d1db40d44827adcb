//! Sensitive unless declared public (docs/session.md#sensitive-and-public-values):
//! which final values of a session are secret.
//!
//! - A value an env file sets (plain or `env.py`, either tier, a store or
//!   an overlay) is sensitive, unless the `agentenv.toml` at the root of
//!   that same store or overlay declares the name (or a `PREFIX_*`) with
//!   `public = true`.
//! - The variables agentenv computes are public by name, whoever set the
//!   final value: `AGENTS_HOME`, `AGENTS_PROJECT_ROOT`, `AGENTS_PYTHON`,
//!   `AGENTS_PYTHONPATH`, every `*_OVERLAY_ROOT`, the identity variables,
//!   `PATH`, `PYTHONPATH` and the proxy variables — except a proxy URL that
//!   holds a user or password, which is sensitive.
//! - A declaration covers only values a layer of its own store or overlay
//!   set (the layer of the final value's last set): a variable whose final
//!   value another store set, or that no layer set (the base
//!   environment's), is never made public by it (a warning names the
//!   declaration). A declared-public value that holds a sensitive value of
//!   another store, or a secret-like value of the caller's environment,
//!   stays sensitive (a warning says so). A plain file that sets a
//!   variable to the value it already has leaves no trace (the reference's
//!   snapshot rule), so the variable stays the caller's. What a store's own
//!   code copies (`X="$X"`, a value in another encoding) is that store's
//!   value: a project store is code, and the trust gate is what stops a
//!   hostile one.
//!
//! `agentenv.toml` is read with the `toml` crate's spanned parser: an
//! unknown field, a wrong type or a bad key is a warning naming the file and
//! line (never the text there) and the entry is ignored; a file that is not
//! TOML is ignored as a whole. Either way, what it would have declared stays
//! sensitive. `dotagents` does not read the file.

use crate::core::{masking, Assembly, DecidedBy, LayerKind, Note, Sensitivity};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A value of the caller's environment this long or longer (and not a
/// path) counts as a secret that a declared-public value may not hold.
const BASE_SECRET_MIN: usize = 16;

/// The declarations file at the root of a store or an overlay.
pub const FILE_NAME: &str = "agentenv.toml";

/// Largest `agentenv.toml` read; a larger one is ignored with a warning.
const MAX_FILE: u64 = 1 << 20;

/// One entry of `[vars]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    public: bool,
    /// `sensitive = true`: masked from 4 bytes whatever it looks like.
    sensitive: bool,
    description: Option<String>,
    line: u32,
}

/// One store's or overlay's declarations.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Declarations {
    file: PathBuf,
    exact: BTreeMap<String, Entry>,
    /// `PREFIX_*` entries (the prefix without `*`), longest first.
    prefixes: Vec<(String, Entry)>,
}

fn line_of(text: &str, offset: usize) -> u32 {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}

/// What a `[vars]` key is: a name, a prefix (`*` removed), or neither.
fn key_shape(key: &str) -> Option<(bool, &str)> {
    use crate::compat::ident;
    match key.strip_suffix('*') {
        Some(prefix) => {
            let b = prefix.as_bytes();
            let ok = b.first().is_none_or(|&c| ident::is_start(c))
                && b.iter().all(|&c| ident::is_continue(c));
            ok.then_some((true, prefix))
        }
        None => ident::is_name(key.as_bytes()).then_some((false, key)),
    }
}

/// One `[vars]` entry's fields (`public`, `sensitive`, `description`),
/// declared at `line`; the first bad field (its offset and why) stops the
/// reading. A new field is one more arm here (and one more in [`FIELDS`]).
fn entry_of(fields: &toml::de::DeTable<'_>, line: u32) -> (Entry, Option<(usize, &'static str)>) {
    use toml::de::DeValue;
    let mut entry = Entry {
        public: false,
        sensitive: false,
        description: None,
        line,
    };
    for (field, value) in fields.iter() {
        let fat = field.span().start;
        let bad = match (field.get_ref().as_ref(), value.get_ref()) {
            ("public", DeValue::Boolean(b)) => {
                entry.public = *b;
                None
            }
            ("public", _) => Some("public is not a boolean (true or false)"),
            ("sensitive", DeValue::Boolean(b)) => {
                entry.sensitive = *b;
                None
            }
            ("sensitive", _) => Some("sensitive is not a boolean (true or false)"),
            ("description", DeValue::String(s)) => {
                entry.description = Some(s.to_string());
                None
            }
            ("description", _) => Some("description is not a string"),
            _ => Some(FIELDS),
        };
        if let Some(why) = bad {
            return (entry, Some((fat, why)));
        }
    }
    if entry.public && entry.sensitive {
        let at = fields
            .iter()
            .find(|(f, _)| f.get_ref().as_ref() == "sensitive")
            .map_or(0, |(f, _)| f.span().start);
        return (
            entry,
            Some((
                at,
                "public = true and sensitive = true contradict each other",
            )),
        );
    }
    (entry, None)
}

/// What an unknown field's warning says.
const FIELDS: &str = "unknown field (only public, sensitive and description)";

impl Declarations {
    /// Parse `text` (the content of `file`). Every problem is a warning in
    /// `notes` naming the file and line, never the text found there.
    pub(crate) fn parse(file: &Path, text: &[u8], notes: &mut Vec<Note>) -> Declarations {
        use toml::de::{DeTable, DeValue};
        let mut out = Declarations {
            file: file.to_path_buf(),
            ..Default::default()
        };
        let shown = file.display();
        let Ok(text) = std::str::from_utf8(text) else {
            notes.push(Note::warning(format!(
                "{shown}: not UTF-8; ignored (the variables it would declare stay sensitive)"
            )));
            return out;
        };
        let doc = match DeTable::parse(text) {
            Ok(doc) => doc,
            Err(e) => {
                let at = e
                    .span()
                    .map(|s| format!(":{}", line_of(text, s.start)))
                    .unwrap_or_default();
                notes.push(Note::warning(format!(
                    "{shown}{at}: not valid TOML; the file is ignored (the variables it would declare stay sensitive)"
                )));
                return out;
            }
        };
        // Collected with their lines and given in file order (the
        // parser's tables are sorted by key).
        let mut found: Vec<(u32, String)> = Vec::new();
        let warn = |found: &mut Vec<(u32, String)>, at: usize, what: &str| {
            let line = line_of(text, at);
            found.push((
                line,
                format!("{shown}:{line}: {what}; entry ignored (stays sensitive)"),
            ));
        };
        for (k, v) in doc.get_ref().iter() {
            if k.get_ref().as_ref() != "vars" {
                warn(
                    &mut found,
                    k.span().start,
                    "unknown top-level key (only [vars] is read)",
                );
                continue;
            }
            let DeValue::Table(vars) = v.get_ref() else {
                warn(&mut found, k.span().start, "[vars] is not a table");
                continue;
            };
            for (name, decl) in vars.iter() {
                let at = name.span().start;
                let Some((is_prefix, key)) = key_shape(name.get_ref()) else {
                    warn(
                        &mut found,
                        at,
                        "a key of [vars] is neither a variable name nor a PREFIX_* (letters, digits, _, then *)",
                    );
                    continue;
                };
                let DeValue::Table(fields) = decl.get_ref() else {
                    warn(
                        &mut found,
                        at,
                        &format!(
                            "{key}: not a table like {{ public = true, description = \"…\" }}"
                        ),
                    );
                    continue;
                };
                let (entry, bad) = entry_of(fields, line_of(text, at));
                if let Some((fat, why)) = bad {
                    let printed = if is_prefix {
                        format!("{key}*: {why}")
                    } else {
                        format!("{key}: {why}")
                    };
                    warn(&mut found, fat, &printed);
                    continue;
                }
                if is_prefix {
                    out.prefixes.push((key.to_string(), entry));
                } else {
                    out.exact.insert(key.to_string(), entry);
                }
            }
        }
        found.sort_by_key(|(line, _)| *line);
        notes.extend(found.into_iter().map(|(_, w)| Note::warning(w)));
        // Longest prefix first: the most specific declaration wins.
        out.prefixes.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        out
    }

    /// The `agentenv.toml` of the store or overlay at `dir` (relative paths
    /// against `cwd`); `None` when there is none.
    pub(crate) fn load(dir: &Path, cwd: &Path, notes: &mut Vec<Note>) -> Option<Declarations> {
        let file = dir.join(FILE_NAME);
        let full = super::paths::at(&file, cwd);
        // Missing (or a dangling link): nothing declared. Only a regular
        // file is read (links followed); a FIFO is never opened.
        let md = std::fs::metadata(&full).ok()?;
        if !md.is_file() {
            notes.push(Note::warning(format!(
                "{}: not a regular file; ignored (the variables it would declare stay sensitive)",
                file.display()
            )));
            return None;
        }
        match crate::fsutil::read_input(&full, MAX_FILE) {
            Ok(text) => Some(Declarations::parse(&file, &text, notes)),
            Err(e) => {
                notes.push(Note::warning(format!(
                    "{}: cannot read it ({}); ignored (the variables it would declare stay sensitive)",
                    file.display(),
                    crate::fsutil::io_kind(&e)
                )));
                None
            }
        }
    }

    /// What the entry covering `name` declares: `(public, sensitive)`
    /// (`None`: no entry covers it).
    pub(crate) fn declared(&self, name: &[u8]) -> Option<(bool, bool)> {
        self.lookup(name).map(|e| (e.public, e.sensitive))
    }

    /// The entry covering `name`: the exact name, else the longest prefix.
    fn lookup(&self, name: &[u8]) -> Option<&Entry> {
        if let Some(e) = std::str::from_utf8(name)
            .ok()
            .and_then(|n| self.exact.get(n))
        {
            return Some(e);
        }
        self.prefixes
            .iter()
            .find(|(p, _)| name.starts_with(p.as_bytes()))
            .map(|(_, e)| e)
    }
}

const PROXY_NAMES: &[&str] = &[
    "AGENTS_PROXY",
    "AGENTS_WEBFETCH_PROXY_URL",
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
];

const COMPUTED_NAMES: &[&str] = &[
    "AGENTS_HOME",
    "AGENTS_PROJECT_ROOT",
    "AGENTS_PYTHON",
    "AGENTS_PYTHONPATH",
    "AGENTS_HARNESS",
    "AGENTS_VENDOR",
    "AGENTS_MODEL",
    "AGENT",
    "PATH",
    "PYTHONPATH",
];

const OVERLAY_ROOT_SUFFIX: &[u8] = b"_OVERLAY_ROOT";

/// Is `name` one of the proxy variables?
pub(crate) fn is_proxy_name(name: &[u8]) -> bool {
    PROXY_NAMES.iter().any(|p| p.as_bytes() == name)
}

/// Is `name` a variable agentenv computes (public by name)? The proxy
/// variables are not in this list: see [`has_userinfo`].
pub(crate) fn is_computed_name(name: &[u8]) -> bool {
    COMPUTED_NAMES.iter().any(|p| p.as_bytes() == name)
        || (name.len() > OVERLAY_ROOT_SUFFIX.len() && name.ends_with(OVERLAY_ROOT_SUFFIX))
}

/// Does a proxy URL carry a user or password (`scheme://user:pw@host`, or
/// `user@host` without a scheme): an `@` in the authority part.
pub(crate) fn has_userinfo(value: &[u8]) -> bool {
    let rest = match value.windows(3).position(|w| w == b"://") {
        Some(i) => &value[i + 3..],
        None => value,
    };
    let end = rest
        .iter()
        .position(|&c| matches!(c, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    rest[..end].contains(&b'@')
}

/// The rule by name, whoever set the value (a layer or the base): a
/// proxy variable is public unless its value holds a user or password, a
/// computed variable is public; `None` for every other name.
pub(crate) fn by_name(name: &OsStr, value: &OsStr) -> Option<Sensitivity> {
    let n = name.as_bytes();
    if is_proxy_name(n) {
        Some(agentenv(!has_userinfo(value.as_bytes())))
    } else if is_computed_name(n) {
        Some(agentenv(true))
    } else {
        None
    }
}

/// What decides each set variable, before the cross-store check.
struct Decided {
    sensitivity: Sensitivity,
    /// The store or overlay whose layer (an env file) set the final value.
    origin: Option<PathBuf>,
}

/// The final value's origin: the layer of the last set or override,
/// walked back past every override that set the value the variable
/// already had (an `env.py` that re-emits `GH_TOKEN` under the same name
/// does not become its origin, as a plain file doing the same leaves no
/// trace); `None` when no layer set it or the value is the base's.
fn setter(a: &Assembly, name: &OsStr) -> Option<usize> {
    let touches = a.touches(name);
    let is_set = |t: &&crate::core::Touch| {
        matches!(
            t.action,
            crate::core::Action::Set | crate::core::Action::Override
        )
    };
    let mut i = touches.iter().rposition(|t| is_set(&t))?;
    while touches[i].unchanged {
        i = touches[..i].iter().rposition(|t| is_set(&t))?;
    }
    Some(touches[i].layer)
}

fn agentenv(public: bool) -> Sensitivity {
    Sensitivity {
        public,
        description: None,
        decided_by: DecidedBy::Agentenv,
        declared_sensitive: false,
    }
}

/// The sensitivity of every variable the session's result sets (keyed by
/// name); `decls` holds the declarations of each store and overlay
/// directory. Warnings (a declared-public value holding another store's
/// sensitive value) go to `notes`.
pub(crate) fn classify(
    a: &Assembly,
    decls: &BTreeMap<PathBuf, Declarations>,
    notes: &mut Vec<Note>,
) -> BTreeMap<OsString, Sensitivity> {
    let mut decided: BTreeMap<OsString, Decided> = BTreeMap::new();
    for (name, value) in a.result().assigned() {
        let d = match by_name(name, value) {
            Some(sensitivity) => Decided {
                sensitivity,
                origin: None,
            },
            None => decide_layer_set(a, name, decls),
        };
        decided.insert(name.clone(), d);
    }
    // A declaration of a name whose final value another store, an
    // overlay or the base set does not apply; say so (it is either a
    // mistake or an attempt to unmask another store's value).
    for (dir, d) in decls {
        for (name, e) in d.exact.iter().filter(|(_, e)| e.public) {
            let Some(other) = decided.get(OsStr::new(name)) else {
                continue;
            };
            let by = match &other.origin {
                Some(o) if o != dir && !other.sensitivity.public => o.display(),
                _ => continue,
            };
            notes.push(Note::warning(format!(
                "{}:{}: {name} is declared public, but its final value was set by {by}; a declaration covers its own store's values only, so it stays sensitive",
                d.file.display(),
                e.line
            )));
        }
    }
    // A declared-public value that holds a sensitive value another store
    // or overlay set stays sensitive: a declaration covers its own
    // store's values only, also when they are copied. The caller's own
    // values count too when they look like secrets rather than paths or
    // words (BASE_SECRET_MIN bytes or more, not starting with `/`).
    let by_of = |origin: &Option<PathBuf>| match origin {
        Some(p) => p.display().to_string(),
        None => "agentenv".to_string(),
    };
    let mut secrets: Vec<(OsString, &[u8], Option<PathBuf>, String)> = decided
        .iter()
        .filter(|(_, d)| !d.sensitivity.public)
        .filter_map(|(k, d)| {
            let v = a.result().assigned().get(k)?.as_bytes();
            masking(v, d.sensitivity.declared_sensitive)
                .is_masked()
                .then(|| (k.clone(), v, d.origin.clone(), by_of(&d.origin)))
        })
        .collect();
    for (k, v) in a.base() {
        let v = v.as_bytes();
        let secret_like = v.len() >= BASE_SECRET_MIN && !v.starts_with(b"/");
        if secret_like
            && a.final_value(k).map(OsStr::as_bytes) == Some(v)
            && !a.result().assigned().contains_key(k)
            && by_name(k, OsStr::from_bytes(v)).is_none_or(|s| !s.public)
        {
            secrets.push((k.clone(), v, None, "the caller's environment".into()));
        }
    }
    // A variable public by name (PATH, PYTHONPATH, AGENTS_MODEL, the
    // overlay roots, the proxy variables, and what agentenv derives from
    // them) that holds a sensitive value — any store's, its own included —
    // is sensitive: no secret becomes public by name (it would land in
    // CLAUDE_ENV_FILE). Values that look like paths (starting with `/`)
    // are not looked for there: a store's directory in PATH is no secret.
    let mut out = BTreeMap::new();
    for (name, d) in decided {
        let mut s = d.sensitivity;
        let declared = matches!(s.decided_by, DecidedBy::Declaration { .. });
        let by_name = s.public && s.decided_by == DecidedBy::Agentenv;
        if s.public && (declared || by_name) {
            let value = a
                .result()
                .assigned()
                .get(&name)
                .map(|v| v.as_bytes())
                .unwrap_or(b"");
            let held = secrets.iter().find(|(other, v, origin, _)| {
                *other != name
                    && if by_name {
                        !v.starts_with(b"/") && contains(value, v)
                    } else {
                        *origin != d.origin && contains(value, v)
                    }
            });
            if let Some((other, _, origin, by)) = held {
                let (at, what) = if by_name {
                    (String::new(), "is public by name (agentenv computes it)")
                } else {
                    (format!("{}: ", s.decided_by), "is declared public")
                };
                notes.push(Note::warning(format!(
                    "{at}{} {what}, but its value holds the value of {}, from {by}; it stays sensitive",
                    name.to_string_lossy(),
                    other.to_string_lossy(),
                )));
                s.public = false;
                s.decided_by = match origin {
                    Some(p) => DecidedBy::Store(p.clone()),
                    None if by.starts_with("agentenv") => DecidedBy::Agentenv,
                    None => DecidedBy::Base,
                };
            }
        }
        out.insert(name, s);
    }
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// A variable not computed by agentenv: its setter's store decides.
fn decide_layer_set(
    a: &Assembly,
    name: &OsStr,
    decls: &BTreeMap<PathBuf, Declarations>,
) -> Decided {
    let Some(layer) = setter(a, name) else {
        return Decided {
            sensitivity: Sensitivity {
                public: false,
                description: None,
                decided_by: DecidedBy::Base,
                declared_sensitive: false,
            },
            origin: None,
        };
    };
    let info = &a.layers()[layer].info;
    let from_file = matches!(info.kind, LayerKind::EnvScript | LayerKind::PlainFile);
    let origin = info
        .path
        .as_deref()
        .and_then(Path::parent)
        .map(Path::to_path_buf);
    let (true, Some(root)) = (from_file, origin) else {
        // A computed layer set a name outside the list: still agentenv's.
        return Decided {
            sensitivity: agentenv(true),
            origin: None,
        };
    };
    let entry = decls
        .get(&root)
        .and_then(|d| Some((d, d.lookup(name.as_bytes())?)));
    let sensitivity = match entry {
        Some((d, e)) => Sensitivity {
            public: e.public,
            declared_sensitive: e.sensitive,
            description: e.description.clone(),
            decided_by: DecidedBy::Declaration {
                file: d.file.clone(),
                line: e.line,
            },
        },
        None => Sensitivity {
            public: false,
            description: None,
            declared_sensitive: false,
            decided_by: DecidedBy::Store(root.clone()),
        },
    };
    Decided {
        sensitivity,
        origin: Some(root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Declarations, Vec<String>) {
        let mut notes = Vec::new();
        let d = Declarations::parse(Path::new("/s/agentenv.toml"), text.as_bytes(), &mut notes);
        (d, notes.into_iter().map(|n| n.text).collect())
    }

    #[test]
    fn names_and_prefixes() {
        let (d, w) = parse(
            "[vars]\nLOG_LEVEL = { public = true, description = \"log level\" }\n\"FEATURE_*\" = { public = true }\n\"FEATURE_SECRET_*\" = { public = false }\nGH_TOKEN = { description = \"gh\" }\n",
        );
        assert!(w.is_empty(), "{w:?}");
        let e = d.lookup(b"LOG_LEVEL").unwrap();
        assert_eq!((e.public, e.line), (true, 2));
        assert_eq!(e.description.as_deref(), Some("log level"));
        assert!(d.lookup(b"FEATURE_X").unwrap().public);
        assert!(!d.lookup(b"FEATURE_SECRET_X").unwrap().public);
        assert!(!d.lookup(b"GH_TOKEN").unwrap().public);
        assert!(d.lookup(b"OTHER").is_none());
    }

    #[test]
    fn bad_entries_warn_with_their_line_and_are_ignored() {
        let (d, w) = parse(
            "[vars]\nA = { public = \"yes-canary\" }\nB = { pubic = true }\n\"C D\" = { public = true }\nE = true\nF = { public = true, description = 3 }\nG = { public = true }\n[other]\n",
        );
        assert!(d.lookup(b"A").is_none() && d.lookup(b"B").is_none());
        assert!(d.lookup(b"E").is_none() && d.lookup(b"F").is_none());
        assert!(d.lookup(b"G").unwrap().public);
        let lines: Vec<&str> = w.iter().map(|t| t.split(": ").next().unwrap()).collect();
        assert_eq!(
            lines,
            [
                "/s/agentenv.toml:2",
                "/s/agentenv.toml:3",
                "/s/agentenv.toml:4",
                "/s/agentenv.toml:5",
                "/s/agentenv.toml:6",
                "/s/agentenv.toml:8"
            ]
        );
        assert!(w
            .iter()
            .all(|t| !t.contains("canary") && !t.contains("C D")));
    }

    #[test]
    fn invalid_toml_is_ignored_whole() {
        let (d, w) = parse("[vars]\nA = { public = true }\nB = = x-canary\n");
        assert_eq!(
            d,
            Declarations {
                file: "/s/agentenv.toml".into(),
                ..Default::default()
            }
        );
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("/s/agentenv.toml:3: not valid TOML"),
            "{w:?}"
        );
        assert!(!w[0].contains("canary"));
        let (_, w) = parse("[vars]\nA = {}\nA = {}\n");
        assert!(w[0].starts_with("/s/agentenv.toml:3:"), "{w:?}");
        let mut notes = Vec::new();
        Declarations::parse(Path::new("/s/agentenv.toml"), b"\xff", &mut notes);
        assert!(notes[0].text.contains("not UTF-8"));
    }

    #[test]
    fn proxy_userinfo() {
        assert!(has_userinfo(b"http://u:p@proxy:3128"));
        assert!(has_userinfo(b"http://u@proxy"));
        assert!(has_userinfo(b"u:p@proxy:3128"));
        assert!(!has_userinfo(b"http://proxy:3128/a@b"));
        assert!(!has_userinfo(b"http://proxy:3128"));
        assert!(!has_userinfo(b"localhost,.internal"));
    }

    #[test]
    fn computed_names() {
        assert!(is_computed_name(b"TOOLS_OVERLAY_ROOT"));
        assert!(!is_computed_name(b"_OVERLAY_ROOT"));
        assert!(is_computed_name(b"PATH") && !is_computed_name(b"TOKEN"));
    }
}
