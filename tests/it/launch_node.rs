//! Differential tests of the operator layer's JavaScript semantics against
//! Node itself: the report's name order (`localeCompare`, ICU) and the
//! lexical path rules (`path.resolve`, `path.join`). Needs `node` (a skip
//! otherwise; a failure under `AGENTENV_REQUIRE_ALL=1`).

use crate::support;

use support::Rng;

use agentenv::internals::node::{join as path_join, resolve as path_resolve};
use agentenv::operator::compare_names;
use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Run `script` under node with `input` on stdin; parse its JSON stdout.
fn node(script: &str, input: &serde_json::Value) -> Option<serde_json::Value> {
    let node = support::tool("node")?;
    let mut child = Command::new(node)
        .args(["-e", script])
        .env("LANG", "en_US.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let data = serde_json::to_vec(input).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let w = std::thread::spawn(move || stdin.write_all(&data).unwrap());
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    assert!(out.status.success());
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

const READ_STDIN: &str = "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));";

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn name_order_matches_node_locale_compare() {
    // Names over the grammar's alphabet, biased towards near-collisions
    // (same letters, different case, `_` and digits).
    let alphabet: Vec<char> = "aAbBzZ_09mM".chars().collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut names: Vec<String> = (0..3000)
        .map(|_| {
            let len = 1 + rng.below(5);
            (0..len)
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect()
        })
        .collect();
    names.sort();
    names.dedup();
    let script = format!(
        "{READ_STDIN} input.sort((a, b) => a.localeCompare(b)); process.stdout.write(JSON.stringify(input));"
    );
    let Some(expected) = node(&script, &serde_json::json!(names)) else {
        return;
    };
    let expected: Vec<String> = serde_json::from_value(expected).unwrap();
    assert_ne!(expected, names, "ICU order is not byte order");
    let mut ours = names.clone();
    ours.sort_by(|a, b| compare_names(a, b));
    assert_eq!(ours, expected);
}

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn path_rules_match_node() {
    let segs = [
        "a", "..", ".", "", "b c", "...", " ", "x.env", "${X}", "...",
    ];
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut paths: Vec<String> = Vec::new();
    for _ in 0..2000 {
        let n = rng.below(6);
        let mut p: Vec<&str> = (0..n).map(|_| segs[rng.below(segs.len())]).collect();
        if rng.below(2) == 0 {
            p.insert(0, "");
        }
        let mut s = p.join("/");
        if rng.below(4) == 0 {
            s.push('/');
        }
        paths.push(s);
    }
    let cwd = "/work/some/cwd";
    let script = format!(
        "{READ_STDIN} const path = require('path');
         const out = input.map(p => [path.resolve({cwd:?}, p), path.join(p, '.env')]);
         process.stdout.write(JSON.stringify(out));"
    );
    let Some(expected) = node(&script, &serde_json::json!(paths)) else {
        return;
    };
    let expected: Vec<(String, String)> = serde_json::from_value(expected).unwrap();
    for (p, (res, join)) in paths.iter().zip(expected) {
        let ours = path_resolve(Path::new(cwd), OsStr::new(p));
        assert_eq!(ours.to_str().unwrap(), res, "resolve {p:?}");
        let ours = path_join(Path::new(p), ".env");
        assert_eq!(ours.to_str().unwrap(), join, "join {p:?}");
    }
}
