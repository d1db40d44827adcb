//! `agentenv explain`: which layer touched each variable, in order, with
//! file and line, and never a value unless asked.

use crate::support;

use serde_json::json;
use support::{Run, Tree};

const SECRET: &str = "s3cr3t-explain-canary";

/// A user store with an overlay, a project store with a pre tier file and
/// an env that goes through bash (an expansion: no line numbers).
fn tree() -> Tree {
    Tree::session()
        .file(
            "home/.agents/env",
            format!("# user\nTOKEN={SECRET}\nSHARED=user\n"),
        )
        .file("home/.agents/overlays/tools/env", "TOOL=1\n")
        .file("proj/.agents/pre.env", "\n\nSHARED=pre\n")
        .file(
            "proj/.agents/env",
            r#"SHARED="proj-$TOOL"
unset GONE
"#,
        )
}

/// `agentenv explain ARGS`, with `GONE` set in the caller's environment.
fn explain(t: &Tree, args: &[&str]) -> Run {
    t.agentenv(["explain"]).args(args).env("GONE", "base-value")
}

/// The text with the tree's root spelled `$W` and the column padding
/// squeezed to two spaces (the padding follows the root's length; the
/// alignment itself is checked on the raw text).
fn columns(text: &str, t: &Tree) -> String {
    let text = text.replace(t.w(), "$W");
    let mut out = String::new();
    for line in text.lines() {
        let mut squeezed = String::new();
        for (i, cell) in line.split("  ").enumerate() {
            if i > 0 && cell.is_empty() {
                continue;
            }
            if i > 0 {
                squeezed.push_str("  ");
            }
            squeezed.push_str(cell.trim_start());
        }
        out.push_str(squeezed.trim_end());
        out.push('\n');
    }
    out
}

#[test]
fn text_shows_every_layer_in_order_with_lines() {
    let t = tree();
    let ran = explain(&t, &[]).run();
    // Pre tier first (project pre.env), then the main tier: user env, then the
    // project env (through bash: no line). Computed layers are there too. Each
    // variable with a value ends with who decided it is public or sensitive
    // (docs/session.md#sensitive-and-public-values); never the value.
    assert_eq!(
        columns(&ran.stdout, &t),
        "\
AGENTS_HOME  set
  #2  roots  -  -  set
  public: computed by agentenv

AGENTS_PROJECT_ROOT  set
  #2  roots  -  -  set
  public: computed by agentenv

GONE  removed
  #10  plain file  project  $W/proj/.agents/env  unset

PATH  changed
  #5  bin paths  -  -  override
  public: computed by agentenv

SHARED  set
  #7  plain file  project  $W/proj/.agents/pre.env:3  set
  #9  plain file  user  $W/home/.agents/env:3  override
  #10  plain file  project  $W/proj/.agents/env  override
  sensitive: set by $W/proj/.agents, not declared public; not masked: shorter than 8 bytes; declare sensitive = true to mask it

TOKEN  set
  #9  plain file  user  $W/home/.agents/env:2  set
  sensitive: set by $W/home/.agents, not declared public

TOOL  set
  #8  plain file  tools  $W/home/.agents/overlays/tools/env:1  set
  sensitive: set by $W/home/.agents/overlays/tools, not declared public; too short to mask

TOOLS_OVERLAY_ROOT  set
  #4  overlay root  tools  $W/home/.agents/overlays/tools  set
  public: computed by agentenv
"
    );
}

#[test]
fn text_columns_are_aligned() {
    let t = tree();
    let text = explain(&t, &[]).run().stdout;
    // The file column starts at the same offset on every row (the
    // sensitivity lines are not rows).
    let offsets: Vec<usize> = text
        .lines()
        .filter(|l| l.starts_with("  #"))
        .filter_map(|l| l.find(t.w()))
        .collect();
    assert_eq!(offsets.len(), 7, "{text}");
    assert!(
        offsets.windows(2).all(|w| w[0] == w[1]),
        "{offsets:?} in\n{text}"
    );
}

#[test]
fn text_holds_no_value() {
    let t = tree();
    explain(&t, &[])
        .secret(SECRET)
        .stdout_lacks("base-value")
        .stdout_lacks("proj-1")
        .run();
}

#[test]
fn show_values_and_named_vars() {
    let t = tree();
    let ran = explain(&t, &["--show-values", "TOKEN", "SHARED", "NOT_THERE"]).run();
    assert_eq!(
        columns(&ran.stdout, &t),
        format!(
            "\
TOKEN  set = '{SECRET}'
  #9  plain file  user  $W/home/.agents/env:2  set
  sensitive: set by $W/home/.agents, not declared public

SHARED  set = 'proj-1'
  #7  plain file  project  $W/proj/.agents/pre.env:3  set
  #9  plain file  user  $W/home/.agents/env:3  override
  #10  plain file  project  $W/proj/.agents/env  override
  sensitive: set by $W/proj/.agents, not declared public; not masked: shorter than 8 bytes; declare sensitive = true to mask it

NOT_THERE  absent
  (no layer touched it)
"
        )
    );
}

#[test]
fn json_variables_are_sorted() {
    let t = tree();
    let top = explain(&t, &["--format", "json"]).run().json();
    assert_eq!(top["failed_layers"], json!([]));
    let keys: Vec<&String> = top["variables"].as_object().unwrap().keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
}

#[test]
fn json_has_the_same_content() {
    let t = tree();
    let j = explain(&t, &["--format", "json"]).run().json_w();
    assert_eq!(
        j["variables"]["SHARED"],
        json!({
            "state": "set",
            "touches": [
                {"layer": 7, "kind": "plain file", "level": "project",
                 "file": "$W/proj/.agents/pre.env", "line": 3, "action": "set", "reason": null},
                {"layer": 9, "kind": "plain file", "level": "user",
                 "file": "$W/home/.agents/env", "line": 3, "action": "override", "reason": null},
                {"layer": 10, "kind": "plain file", "level": "project",
                 "file": "$W/proj/.agents/env", "line": null, "action": "override", "reason": null}
            ],
            "sensitivity": "sensitive",
            "description": null,
            "decided_by": {"kind": "store", "path": "$W/proj/.agents", "line": null},
            "too_short_to_mask": false,
            "masked": false,
            "not_masked": "not masked: shorter than 8 bytes; declare sensitive = true to mask it"
        })
    );
    assert_eq!(j["variables"]["GONE"]["state"], "removed");
    assert!(!j.to_string().contains(SECRET));
}

#[test]
fn json_shows_a_value_when_asked() {
    let t = tree();
    let j = explain(&t, &["--format", "json", "--show-values", "TOKEN"])
        .run()
        .json();
    assert_eq!(j["variables"]["TOKEN"]["value"], SECRET);
}

#[test]
fn skipped_values_say_why() {
    let t = tree().file(
        "proj/.agents/env.py",
        r#"import json
print(json.dumps({"NUM": 3, "OK": "v"}))
"#,
    );
    let ran = explain(&t, &["NUM", "OK"]).run();
    assert_eq!(
        columns(&ran.stdout, &t),
        "\
NUM  absent
  #10  env.py  project  $W/proj/.agents/env.py  skipped (value is a JSON int, not a string)

OK  set
  #10  env.py  project  $W/proj/.agents/env.py  set
  sensitive: set by $W/proj/.agents, not declared public; too short to mask
"
    );
}

/// A project `local.env` that fails as a whole, a user `env.py` that
/// exits 3; both print the secret.
fn failing() -> Tree {
    tree()
        .file("proj/.agents/local.env", format!("X={SECRET}\nexit 0\n"))
        .file(
            "home/.agents/env.py",
            format!("import sys\nprint('{SECRET}')\nsys.exit(3)\n"),
        )
}

#[test]
fn failed_layers_are_listed_last() {
    let t = failing();
    let ran = explain(&t, &[]).secret(SECRET).run();
    let text = columns(&ran.stdout, &t);
    let tail = &text[text
        .find("failed layers (they changed nothing)\n")
        .expect(&text)..];
    assert_eq!(
        tail,
        "\
failed layers (they changed nothing)
  #9  env.py  user  $W/home/.agents/env.py  exit 3
  #12  plain file  project  $W/proj/.agents/local.env  source failed
"
    );
}

#[test]
fn json_lists_failed_layers() {
    let t = failing();
    let ran = explain(&t, &["--format", "json"]).secret(SECRET).run();
    assert_eq!(
        ran.json_w()["failed_layers"],
        json!([
            {"layer": 9, "kind": "env.py", "level": "user",
             "file": "$W/home/.agents/env.py", "reason": "exit 3"},
            {"layer": 12, "kind": "plain file", "level": "project",
             "file": "$W/proj/.agents/local.env", "reason": "source failed"}
        ])
    );
}

#[test]
fn bad_format_is_an_error() {
    // As every bad --format (docs/commands.md#commands): exit 1, the accepted values
    // listed.
    explain(&tree(), &["--format", "yaml"])
        .status(1)
        .stdout("")
        .stderr_has("[possible values: text, json]")
        .run();
}
