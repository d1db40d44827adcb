//! Properties (proptest): renderers read back to the same values, the
//! dotenv writer and parser are inverse, and the change-set application
//! laws of `core` hold for any base and any sequence of layers.

use crate::support;

use agentenv::core::{Assembly, ChangeSet, Env, LayerInfo, LayerKind};
use agentenv::render::{render, Format, View};
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::process::Command;

fn ident() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_]{0,6}"
}

/// Values rich in the characters quoting rules care about (no NUL: an
/// environment cannot carry it).
fn value() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => "[a-z0-9]",
            3 => prop::sample::select(vec![
                " ", "\t", "\n", "\r", "'", "\"", "\\", "$", "`", "#", "%", "=", ":", "{", "}",
                "!", "*", "~", "é", "€", "😀", "\u{85}", "\u{a0}", "\u{2028}", "\u{7f}", "\u{1}",
            ])
            .prop_map(|s| s.to_string()),
        ],
        0..12,
    )
    .prop_map(|v| v.concat())
}

fn vars() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map(ident(), value(), 0..6)
}

/// Names no shell treats specially (`_`, `UID`, fish's `status`, …), so
/// the shell tests measure value quoting only.
fn shell_vars() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map("V_[A-Za-z0-9_]{0,5}", value(), 0..6)
}

fn view_of(vars: &BTreeMap<String, String>) -> View {
    View::of(
        vars.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect::<Vec<_>>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// json → serde_json, yaml → serde-saphyr: exactly the values.
    #[test]
    fn json_and_yaml_read_back(vars in vars()) {
        let view = view_of(&vars);
        let back: BTreeMap<String, String> =
            serde_json::from_str(&render(Format::Json, &view)).unwrap();
        prop_assert_eq!(&back, &vars);
        if !vars.is_empty() {
            let back: BTreeMap<String, String> =
                serde_saphyr::from_str(&render(Format::Yaml, &view)).unwrap();
            prop_assert_eq!(&back, &vars);
        }
    }

    /// The dotenv rendering (written for python-dotenv, checked against it in
    /// tests/it/roundtrip.rs) read back by the project's own grammar
    /// (docs/dotenv.md) gives the values wherever both readers agree: no CR
    /// (universal newlines turn it into LF in both), no backslash and no `'`
    /// (python-dotenv decodes `\\` and `\'`; ours decodes only `\n`, `\r`,
    /// `\"`, and keeps single-quoted text verbatim), no backtick (a quote in
    /// ours, plain text to python-dotenv), single-line (the two treat
    /// whitespace inside a multi-line quoted value differently).
    #[test]
    fn dotenv_rendering_reads_back(vars in vars()) {
        let vars: BTreeMap<String, String> = vars
            .into_iter()
            .filter(|(_, v)| !v.contains(['\r', '\n', '\\', '\'', '`']))
            .collect();
        let text = render(Format::Dotenv, &view_of(&vars));
        let parsed = agentenv::dotenv::parse(&text);
        let back: BTreeMap<String, String> =
            parsed.entries.iter().map(|e| (e.key.clone(), e.value.clone())).collect();
        prop_assert_eq!(back, vars);
    }

    /// `parse(write_value(k, v)) == {k: v}` whenever the writer accepts v.
    #[test]
    fn parse_inverts_write_value(k in ident(), v in value()) {
        if let Some(line) = agentenv::dotenv::write_value(&k, &v) {
            let p = agentenv::dotenv::parse(&line);
            prop_assert_eq!(p.entries.len(), 1);
            prop_assert_eq!(&p.entries[0].key, &k);
            prop_assert_eq!(&p.entries[0].value, &v);
            prop_assert!(p.diagnostics.iter().all(|d| !d.is_error));
        }
    }
}

/// Source `script` in `shell` and print the named variables NUL-separated.
fn shell_values(shell: &str, script: &str, names: &[&String]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("s");
    std::fs::write(&f, script).unwrap();
    let mut prog = format!(". '{}'\n", f.display());
    if shell == "fish" {
        prog = format!("source '{}'\n", f.display());
    }
    for n in names {
        prog.push_str(&format!("printf '%s\\0' \"${n}\"\n"));
    }
    let out = Command::new(shell)
        .arg("-c")
        .arg(prog)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{shell}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn expect_nul_joined(vars: &BTreeMap<String, String>) -> Vec<u8> {
    let mut b = Vec::new();
    for v in vars.values() {
        b.extend_from_slice(v.as_bytes());
        b.push(0);
    }
    b
}

proptest! {
    // Each case starts a shell: fewer cases, many variables each.
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// export → dash (the strictest POSIX reader) and bash.
    #[test]
    #[cfg_attr(any(missing = "dash", missing = "bash"), ignore = "needs dash and bash")]
    fn export_read_back_by_dash_and_bash(vars in shell_vars()) {
        let script = render(Format::Export, &view_of(&vars));
        let names: Vec<&String> = vars.keys().collect();
        for sh in ["dash", "bash"] {
            if support::tool(sh).is_none() {
                continue;
            }
            prop_assert_eq!(shell_values(sh, &script, &names), expect_nul_joined(&vars), "{}", sh);
        }
    }

    /// fish → fish (`set -gx` with `\\` / `\'`).
    #[test]
    #[cfg_attr(missing = "fish", ignore = "needs fish")]
    fn fish_read_back_by_fish(vars in shell_vars()) {
        if support::tool("fish").is_none() {
            return Ok(());
        }
        let script = render(Format::Fish, &view_of(&vars));
        let names: Vec<&String> = vars.keys().collect();
        prop_assert_eq!(shell_values("fish", &script, &names), expect_nul_joined(&vars));
    }
}

// ---------------------------------------------------------------------------
// Change-set application laws (src/core)

/// One layer: its policy, its sets and removals.
#[derive(Debug, Clone)]
struct Layer {
    fill: bool,
    set: Vec<(String, String)>,
    removed: Vec<String>,
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["A", "B", "C", "D", "E", "PATH"]).prop_map(str::to_string)
}

fn layer() -> impl Strategy<Value = Layer> {
    (
        any::<bool>(),
        proptest::collection::vec((key(), "[xy]{0,2}"), 0..4),
        proptest::collection::vec(key(), 0..3),
    )
        .prop_map(|(fill, set, removed)| Layer { fill, set, removed })
}

fn base() -> impl Strategy<Value = Env> {
    proptest::collection::btree_map(key(), "[xy]{0,2}", 0..4).prop_map(|m| {
        m.into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    })
}

fn changeset(l: &Layer) -> ChangeSet {
    let mut cs = ChangeSet::new();
    for (k, v) in &l.set {
        cs.set(k.as_str(), v.as_str());
    }
    for k in &l.removed {
        if !l.set.iter().any(|(s, _)| s == k) {
            cs.remove(k.as_str());
        }
    }
    cs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn application_laws(base in base(), layers in proptest::collection::vec(layer(), 0..6)) {
        let mut a = Assembly::new(base.clone());
        // Model: apply each change set in order; fill skips reserved keys
        // (a key the base had).
        let mut model = base.clone();
        for l in &layers {
            let cs = changeset(l);
            let id = a.add_layer(LayerInfo::new(LayerKind::PlainFile));
            if l.fill {
                let reserved = |k: &OsStr| base.contains_key(k);
                let before = a.current().clone();
                let applied = a.apply_fill(id, &cs, "reserved", reserved);
                // Fill never touches a reserved key, and reports exactly
                // the keys it set.
                for k in base.keys() {
                    prop_assert_eq!(a.current().get(k), before.get(k));
                }
                let want: Vec<OsString> = cs.assigned().keys().filter(|k| !base.contains_key(*k)).cloned().collect();
                prop_assert_eq!(applied, want);
                for (k, v) in cs.assigned() {
                    if !base.contains_key(k) {
                        model.insert(k.clone(), v.clone());
                    }
                }
                for k in cs.removed() {
                    if !base.contains_key(k) {
                        model.remove(k);
                    }
                }
            } else {
                a.apply(id, &cs);
                cs.apply_to(&mut model);
            }
            // Later wins: the current state is the model after each layer.
            prop_assert_eq!(a.current(), &model);
        }
        // The result applied to the base is the final state.
        let mut rebuilt = base.clone();
        a.result().apply_to(&mut rebuilt);
        prop_assert_eq!(&rebuilt, a.current());
        // Removals are recorded only for base keys, never for present ones.
        for k in a.result().removed() {
            prop_assert!(base.contains_key(k));
            prop_assert!(!a.current().contains_key(k));
            prop_assert!(!a.result().assigned().contains_key(k));
        }
        // The diff drops equal values and still rebuilds the final state.
        let d = a.diff();
        for (k, v) in d.assigned() {
            prop_assert_ne!(base.get(k), Some(v));
        }
        let mut rebuilt = base.clone();
        d.apply_to(&mut rebuilt);
        prop_assert_eq!(&rebuilt, a.current());
        // Every key whose final state differs from the base was touched.
        for (k, v) in a.current() {
            if base.get(k) != Some(v) {
                prop_assert!(!a.touches(k).is_empty());
            }
        }
    }
}
