//! The crate's module graph has no cycle (a unit test over the source).
//!
//! Granularity: the top-level modules under `src/` (a file `src/x.rs` or a
//! folder `src/x/`), and within the folders of [`SPLIT`] — the two job
//! folders `session` and `harness`, the agent wiring `agent` and the
//! command line `cli` — their inner modules (one file each; a folder's
//! `mod.rs` is its face, not a node). `lib.rs` and `main.rs` are the roof.
//!
//! Besides no cycle, rules of direction ([`RULES`]): `agent`, `session`,
//! `audit` and `mcp` never import `cli` (the command line calls the engine
//! rooms, as cargo's commands call `ops`), `refs` imports neither `agent`
//! nor `cli`, and `mask` imports nothing but the ground floor (it is a leaf
//! engine that knows no job).
//!
//! An edge is any `crate::a::…` path (also inside `use crate::{a, b::c}`)
//! or `super::…` path that lands in another module, in code or in unit
//! tests, outside `//` comments (doc links do not count). `crate::warn!`
//! and its siblings are `log`'s. The text is read, not parsed: a path
//! spelt inside a string literal would count too, which only errs on the
//! strict side.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folders whose inner modules are nodes of their own.
const SPLIT: &[&str] = &["session", "harness", "agent", "cli"];

/// Per module, the modules it may import (`Only`) or may not (`Not`).
enum Rule {
    Only(&'static [&'static str]),
    Not(&'static [&'static str]),
}

/// The rules of direction, checked besides the cycles.
const RULES: &[(&str, Rule)] = &[
    ("agent", Rule::Not(&["cli"])),
    ("session", Rule::Not(&["cli"])),
    ("audit", Rule::Not(&["cli"])),
    ("mcp", Rule::Not(&["cli"])),
    // The value daemon's clients are the session and the agent room;
    // the references know neither the wiring nor the command line.
    ("refs", Rule::Not(&["agent", "cli"])),
    (
        "mask",
        Rule::Only(&["compat", "core", "fsutil", "log", "platform"]),
    ),
];

/// Every `.rs` file below `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src is readable")
        .map(|e| e.expect("src entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `src/session/cache.rs` → `[session, cache]`,
/// `src/harness/mod.rs` → `[harness]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("below src");
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The text with every `//` comment cut off.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths after each `crate::` / `super::` in `code`, as segment lists
/// (`super` segments resolved against `here`, the file's module path);
/// `crate::{a, b::c}` gives `[a]` and `[b, c]`.
fn paths_in(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let at_word = i == 0 || !is_ident_byte(b[i - 1]);
        let rest = &b[i..];
        let (mut base, mut j) = if at_word && rest.starts_with(b"crate::") {
            (Vec::new(), i + "crate::".len())
        } else if at_word && rest.starts_with(b"super::") {
            let mut base = here.to_vec();
            let mut j = i;
            while b[j..].starts_with(b"super::") {
                base.pop();
                j += "super::".len();
            }
            (base, j)
        } else {
            i += 1;
            continue;
        };
        if b.get(j) == Some(&b'{') {
            let end = b[j..]
                .iter()
                .position(|&c| c == b'}')
                .map_or(b.len(), |k| j + k);
            for item in code[j + 1..end].split(',') {
                let mut p = base.clone();
                p.extend(segments(item.trim()));
                out.push(p);
            }
            i = end;
            continue;
        }
        let start = j;
        while j < b.len() && (is_ident_byte(b[j]) || b[j..].starts_with(b"::")) {
            j += if b[j] == b':' { 2 } else { 1 };
        }
        base.extend(segments(&code[start..j]));
        out.push(base);
        i = j.max(i + 1);
    }
    out
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .take_while(|s| !s.is_empty() && s.bytes().all(is_ident_byte))
        .map(str::to_string)
        .collect()
}

/// The top-level module a path names (`crate::warn!` is `log`'s), if it
/// names one.
fn top_of(path: &[String], tops: &BTreeSet<String>) -> Option<String> {
    let top = match path.first()?.as_str() {
        "warn" | "error" | "info" | "debug" => "log",
        t => t,
    };
    tops.contains(top).then(|| top.to_string())
}

/// The module graph of the tree under `src`: node → the nodes it names.
/// Two kinds of nodes that never meet: the top-level modules (every file
/// counted as its top-level module), and `folder::inner` for the inner
/// modules of each [`SPLIT`] folder (edges between them only).
pub(crate) fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(src, &mut all);
    let roof = ["lib", "main", "import_graph"];
    let mut tops = BTreeSet::new();
    let mut inner: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let m = module_path(src, f);
        if roof.contains(&m[0].as_str()) {
            continue;
        }
        tops.insert(m[0].clone());
        if m.len() > 1 && SPLIT.contains(&m[0].as_str()) {
            inner.entry(m[0].clone()).or_default().insert(m[1].clone());
        }
    }
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let here = module_path(src, f);
        if !tops.contains(&here[0]) {
            continue;
        }
        let from_inner = inner
            .get(&here[0])
            .and_then(|subs| here.get(1).filter(|s| subs.contains(*s)));
        let text = std::fs::read_to_string(f).expect("source is UTF-8");
        for p in paths_in(&code_of(&text), &here) {
            let Some(to) = top_of(&p, &tops) else {
                continue;
            };
            if to != here[0] {
                edges.entry(here[0].clone()).or_default().insert(to);
                continue;
            }
            let to_inner = p
                .get(1)
                .filter(|s| inner.get(&to).is_some_and(|subs| subs.contains(*s)));
            if let (Some(a), Some(b)) = (from_inner, to_inner) {
                if a != b {
                    edges
                        .entry(format!("{to}::{a}"))
                        .or_default()
                        .insert(format!("{to}::{b}"));
                }
            }
        }
    }
    edges
}

/// The cycles of a graph: each strongly connected component of more than
/// one node, its nodes sorted.
pub(crate) fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two nodes are in one cycle when each reaches the other.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for t in edges.get(&n).into_iter().flatten() {
                if seen.insert(t.clone()) {
                    todo.push(t.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|k| (k, reach(k))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for (n, r) in &reached {
        if done.contains(*n) || !r.contains(*n) {
            continue;
        }
        let comp: Vec<String> = r
            .iter()
            .filter(|m| reached.get(m).is_some_and(|rm| rm.contains(*n)))
            .cloned()
            .collect();
        done.extend(comp.iter().cloned());
        out.push(comp);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
    }

    #[test]
    fn no_import_cycle_between_modules() {
        let g = graph(&src());
        let found = cycles(&g);
        let shown: Vec<String> = found
            .iter()
            .map(|c| {
                let arrows: Vec<String> = c
                    .iter()
                    .map(|n| {
                        let to: Vec<&String> = g[n].iter().filter(|t| c.contains(t)).collect();
                        format!("{n} -> {to:?}")
                    })
                    .collect();
                arrows.join("; ")
            })
            .collect();
        assert!(found.is_empty(), "import cycles in src: {shown:#?}");
    }

    #[test]
    fn imports_keep_their_direction() {
        let g = graph(&src());
        let mut broken = Vec::new();
        for (from, rule) in RULES {
            for to in g.get(*from).into_iter().flatten() {
                let ok = match rule {
                    Rule::Only(allowed) => allowed.contains(&to.as_str()),
                    Rule::Not(denied) => !denied.contains(&to.as_str()),
                };
                if !ok {
                    broken.push(format!("{from} -> {to}"));
                }
            }
        }
        assert!(broken.is_empty(), "imports against the rules: {broken:?}");
        // The rules name real modules, and the split folders have files.
        for (from, _) in RULES {
            assert!(g.contains_key(*from), "{from}");
        }
        for folder in SPLIT {
            assert!(
                g.keys().any(|k| k.starts_with(&format!("{folder}::"))),
                "{folder}"
            );
        }
    }

    #[test]
    fn the_graph_sees_paths_the_ways_they_are_written() {
        let here = vec!["session".to_string(), "cache".to_string()];
        let code = code_of(
            "use crate::{fsutil, core::Env};\n\
             // crate::hook is only a comment\n\
             let x = super::super::trust::check(); crate::warn!(\"\");\n\
             use super::scope::Scope;",
        );
        let got = paths_in(&code, &here);
        let want: Vec<Vec<&str>> = vec![
            vec!["fsutil"],
            vec!["core", "Env"],
            vec!["trust", "check"],
            vec!["warn"],
            vec!["session", "scope", "Scope"],
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn a_cycle_is_found() {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut edge = |a: &str, b: &str| {
            g.entry(a.into()).or_default().insert(b.into());
        };
        edge("a", "b");
        edge("b", "c");
        edge("c", "a");
        edge("c", "d");
        edge("d", "e");
        assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
    }
}
