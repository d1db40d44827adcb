//! `agentenv explain`.

mod support;

use serde_json::Value;
use std::fs;
use std::path::PathBuf;
use std::process::Output;

struct Tree {
    _dir: tempfile::TempDir,
    w: PathBuf,
}

const SECRET: &str = "s3cr3t-explain-canary";

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().canonicalize().unwrap();
        fs::create_dir_all(w.join("home/.agents/overlays/tools")).unwrap();
        fs::create_dir_all(w.join("proj/.agents")).unwrap();
        fs::write(
            w.join("home/.agents/env"),
            format!("# user\nTOKEN={SECRET}\nSHARED=user\n"),
        )
        .unwrap();
        fs::write(w.join("home/.agents/overlays/tools/env"), "TOOL=1\n").unwrap();
        fs::write(w.join("proj/.agents/pre.env"), "\n\nSHARED=pre\n").unwrap();
        // Through bash (an expansion): no line numbers.
        fs::write(
            w.join("proj/.agents/env"),
            "SHARED=\"proj-$TOOL\"\nunset GONE\n",
        )
        .unwrap();
        Tree { _dir: dir, w }
    }

    fn run(&self, args: &[&str]) -> Output {
        support::session_cmd(&self.w)
            .env("GONE", "base-value")
            .arg("explain")
            .args(args)
            .output()
            .unwrap()
    }

    fn text(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

/// The block of `name` in text output.
fn block<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("{name}  "))
        .unwrap_or_else(|| panic!("no block for {name} in:\n{text}"));
    let rest = &text[start..];
    match rest.find("\n\n") {
        Some(e) => &rest[..e + 1],
        None => rest,
    }
}

#[test]
fn text_shows_every_layer_in_order_with_lines() {
    let t = Tree::new();
    let text = t.text(&[]);
    let w = t.w.display().to_string();
    let shared = block(&text, "SHARED");
    let lines: Vec<&str> = shared.lines().collect();
    assert_eq!(lines[0], "SHARED  set");
    // Pre tier first (project pre.env), then the main tier: user env, then
    // the project env (through bash: no line).
    assert!(lines[1].contains("plain file") && lines[1].contains("project"));
    assert!(
        lines[1].contains(&format!("{w}/proj/.agents/pre.env:3")),
        "{shared}"
    );
    assert!(lines[1].trim_end().ends_with("set"));
    assert!(lines[2].contains(&format!("{w}/home/.agents/env:3")) && lines[2].contains("user"));
    assert!(lines[2].trim_end().ends_with("override"));
    assert!(
        lines[3].contains(&format!("{w}/proj/.agents/env ")),
        "{shared}"
    );
    assert_eq!(lines.len(), 4);
    // Aligned: the file column starts at the same offset on every row.
    let col = |l: &str| l.find(&w).unwrap();
    assert_eq!(col(lines[1]), col(lines[2]));
    assert_eq!(col(lines[2]), col(lines[3]));

    let gone = block(&text, "GONE");
    assert!(gone.starts_with("GONE  removed\n"));
    assert!(gone.contains("unset"));
    let tool = block(&text, "TOOL");
    assert!(tool.contains("tools") && tool.contains("overlays/tools/env:1"));
    // Computed layers are there too.
    assert!(block(&text, "PATH").contains("bin paths"));
    assert!(block(&text, "AGENTS_HOME").contains("roots"));
    // No value anywhere.
    assert!(!text.contains(SECRET) && !text.contains("base-value") && !text.contains("proj-1"));
}

#[test]
fn show_values_and_named_vars() {
    let t = Tree::new();
    let text = t.text(&["--show-values", "TOKEN", "SHARED", "NOT_THERE"]);
    assert!(
        text.starts_with(&format!("TOKEN  set = '{SECRET}'\n")),
        "{text}"
    );
    assert!(text.contains("SHARED  set = 'proj-1'\n"));
    assert!(text.contains("NOT_THERE  absent\n  (no layer touched it)\n"));
    assert_eq!(text.matches("\n\n").count(), 2);
}

#[test]
fn json_has_the_same_content() {
    let t = Tree::new();
    let top: Value = serde_json::from_str(&t.text(&["--format", "json"])).unwrap();
    assert_eq!(top["failed_layers"], serde_json::json!([]));
    let j = &top["variables"];
    let o = j.as_object().unwrap();
    let keys: Vec<&String> = o.keys().collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let s = &j["SHARED"];
    assert_eq!(s["state"], "set");
    assert!(s.get("value").is_none());
    let touches = s["touches"].as_array().unwrap();
    assert_eq!(touches.len(), 3);
    assert_eq!(touches[0]["kind"], "plain file");
    assert_eq!(touches[0]["level"], "project");
    assert_eq!(touches[0]["line"], 3);
    assert_eq!(touches[0]["action"], "set");
    assert_eq!(touches[1]["action"], "override");
    assert_eq!(touches[2]["line"], Value::Null);
    assert_eq!(j["GONE"]["state"], "removed");
    assert!(!j.to_string().contains(SECRET));
    let j: Value =
        serde_json::from_str(&t.text(&["--format", "json", "--show-values", "TOKEN"])).unwrap();
    assert_eq!(j["variables"]["TOKEN"]["value"], SECRET);
}

#[test]
fn skipped_values_say_why() {
    let t = Tree::new();
    fs::write(
        t.w.join("proj/.agents/env.py"),
        "import json\nprint(json.dumps({\"NUM\": 3, \"OK\": \"v\"}))\n",
    )
    .unwrap();
    let text = t.text(&["NUM", "OK"]);
    let num = block(&text, "NUM");
    assert!(num.starts_with("NUM  absent\n"), "{text}");
    assert!(num.contains("env.py") && num.contains("skipped ("), "{num}");
    assert!(block(&text, "OK").contains("env.py"));
}

#[test]
fn failed_layers_are_listed_last() {
    let t = Tree::new();
    fs::write(
        t.w.join("proj/.agents/local.env"),
        format!("X={SECRET}\nexit 0\n"),
    )
    .unwrap();
    fs::write(
        t.w.join("home/.agents/env.py"),
        format!("import sys\nprint('{SECRET}')\nsys.exit(3)\n"),
    )
    .unwrap();
    let text = t.text(&[]);
    let w = t.w.display().to_string();
    let tail = &text[text
        .find("failed layers (they changed nothing)\n")
        .expect(&text)..];
    let rows: Vec<&str> = tail.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{tail}");
    assert!(rows[0].contains(&format!("{w}/home/.agents/env.py")) && rows[0].ends_with("exit 3"));
    assert!(rows[1].contains(&format!("{w}/proj/.agents/local.env")));
    assert!(rows[1].contains("source failed"));
    assert!(!text.contains(SECRET));
    let j: Value = serde_json::from_str(&t.text(&["--format", "json"])).unwrap();
    let f = j["failed_layers"].as_array().unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!(f[0]["kind"], "env.py");
    assert_eq!(f[0]["level"], "user");
    assert_eq!(f[0]["reason"], "exit 3");
    assert!(!j.to_string().contains(SECRET));
}

#[test]
fn bad_format_is_an_error() {
    let t = Tree::new();
    let out = t.run(&["--format", "yaml"]);
    // As every bad --format (SPEC §2): exit 1, the accepted values listed.
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[possible values: text, json]"));
}
