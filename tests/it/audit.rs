//! `agentenv audit` (docs/audit-set.md#audit-and-set) through the binary, on generated
//! agent transcripts (Claude Code's and Codex's JSONL shapes, Claude's tool
//! result files and session-env files, Gemini's logs) and shell histories
//! (bash, zsh's extended format, fish's YAML-ish file), with values planted in
//! every form the masker knows next to clean files and near misses.
//!
//! The planted bytes of each form come from the masker's own `forms` (the
//! encoders themselves are checked against python3 and node in
//! tests/it/mask.rs); what this file checks is audit's part: every occurrence
//! found at the right line with the right name and form, nothing else
//! found, `--fix` leaving a clean second audit with valid JSONL and the
//! same modes, and the refusals.

use crate::support;

use agentenv::internals::mask::forms;
use serde_json::json;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::Tree;

/// The store's values: (name, value). `SHORT` is too short to look for;
/// `PUBLIC_URL` is declared public in agentenv.toml.
const VALUES: &[(&str, &str)] = &[
    ("GH_TOKEN", "ghp_zqAUD1a2b3c4d5e6f7g8h9"),
    ("API_KEY", "zqAUD/k+e=y&\"q\"\\é-tail"),
    ("QUOTED", "it's-zqAUD-quoted"),
    ("MULTI", "zqAUDline-one-AAAA\nzqAUDline-two-BBBB"),
    ("B64_KEY", "zqAUD>>>???~~~~"),
];

fn store_env() -> String {
    "GH_TOKEN='ghp_zqAUD1a2b3c4d5e6f7g8h9'\n\
     API_KEY='zqAUD/k+e=y&\"q\"\\é-tail'\n\
     QUOTED=\"it's-zqAUD-quoted\"\n\
     MULTI='zqAUDline-one-AAAA\nzqAUDline-two-BBBB'\n\
     B64_KEY='zqAUD>>>???~~~~'\n\
     SHORT='abc'\n\
     PUBLIC_URL='https://zqAUD-public.example'\n"
        .to_string()
}

fn tree() -> Tree {
    Tree::session().file("home/.agents/env", store_env()).file(
        "home/.agents/agentenv.toml",
        "[vars]\nPUBLIC_URL = { public = true, description = \"docs\" }\n",
    )
}

fn cmd(t: &Tree) -> Command {
    let mut c = support::session_cmd(t.root());
    c.env("XDG_STATE_HOME", t.path("state"));
    c
}

struct Out {
    status: i32,
    stdout: String,
    stderr: String,
}

fn audit(t: &Tree, args: &[&str]) -> Out {
    let out = cmd(t).arg("audit").args(args).output().unwrap();
    let o = Out {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    for (name, v) in VALUES {
        for piece in v.lines() {
            assert!(
                !o.stdout.contains(piece) && !o.stderr.contains(piece),
                "audit printed (part of) {name}:\n{}\n{}",
                o.stdout,
                o.stderr
            );
        }
    }
    o
}

/// The form names of `value` and their bytes.
fn forms_of(value: &str) -> Vec<(&'static str, Vec<u8>)> {
    forms(value.as_bytes())
        .into_iter()
        .map(|(f, b)| (f.as_str(), b))
        .collect()
}

/// The variable a needle is reported under: when several values share a
/// form (od's spaced hex of a common prefix), the first name in byte
/// order, as the masker documents.
fn owner_of(bytes: &[u8], name: &'static str) -> &'static str {
    VALUES
        .iter()
        .filter(|(_, v)| forms_of(v).iter().any(|(_, b)| b == bytes))
        .map(|(n, _)| *n)
        .min()
        .unwrap_or(name)
}

/// Which form of which value `literal` is, if any.
fn form_named(literal: &[u8]) -> Option<(&'static str, &'static str)> {
    VALUES.iter().find_map(|(n, v)| {
        forms_of(v)
            .into_iter()
            .find(|(_, b)| b == literal)
            .map(|(f, _)| (*n, f))
    })
}

/// The escape serde_json (as JSON.stringify) writes between the quotes.
fn json_inner(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap();
    q[1..q.len() - 1].to_string()
}

/// A generated home: the files, what audit must report (sorted
/// `FILE:LINE: NAME (form)` lines), and the files holding only near misses
/// or nothing.
struct Planted {
    expected: Vec<String>,
    jsonl: Vec<PathBuf>,
    clean: Vec<PathBuf>,
}

#[derive(Default)]
struct FileBuilder {
    lines: Vec<String>,
    expected: Vec<(usize, String, String)>,
}

impl FileBuilder {
    fn line(&mut self, l: String) -> usize {
        self.lines.push(l);
        self.lines.len()
    }
    fn expect(&mut self, line: usize, name: &str, form: &str) {
        self.expected
            .push((line, name.to_string(), form.to_string()));
    }
    fn write(self, path: &Path, out: &mut Vec<String>) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut body = self.lines.join("\n");
        body.push('\n');
        fs::write(path, body).unwrap();
        for (l, n, f) in self.expected {
            out.push(format!("{}:{l}: {n} ({f})", path.display()));
        }
    }
}

/// A Claude Code transcript line: a user turn carrying a tool result whose
/// text is `text` (twice: the message content and `toolUseResult`).
fn claude_tool_result(i: usize, text: &str) -> String {
    json!({
        "parentUuid": format!("u{i}"),
        "isSidechain": false,
        "type": "user",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": text, "is_error": false}
        ]},
        "uuid": format!("r{i}"),
        "timestamp": "2026-12-03T10:00:00.000Z",
        "toolUseResult": {"stdout": text, "stderr": "", "interrupted": false}
    })
    .to_string()
}

fn claude_tool_use(i: usize, command: &str) -> String {
    json!({
        "type": "assistant",
        "message": {"role": "assistant", "model": "claude-x", "content": [
            {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash", "input": {"command": command}}
        ]},
        "uuid": format!("u{i}"),
    })
    .to_string()
}

/// A Codex rollout line: the output of a shell call (a JSON string inside
/// a JSON string, as Codex writes it).
fn codex_output(i: usize, text: &str) -> String {
    let inner = json!({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.1}});
    json!({
        "timestamp": "2026-12-03T10:00:00.000Z",
        "type": "response_item",
        "payload": {"type": "function_call_output", "call_id": format!("call_{i}"), "output": inner.to_string()}
    })
    .to_string()
}

/// Near misses of `v`: one byte changed (middle and end), a prefix, and
/// the base64 and hex of a different value.
fn near_misses(v: &str) -> Vec<String> {
    let b = v.as_bytes();
    let mut mid = b.to_vec();
    let m = mid.len() / 2;
    mid[m] = if mid[m] == b'Q' { b'R' } else { b'Q' };
    let mut end = b.to_vec();
    let l = end.len() - 1;
    end[l] = if end[l] == b'Z' { b'Y' } else { b'Z' };
    let half: String = v.chars().take(v.chars().count() / 2).collect();
    let other = format!("{half}-other");
    let b64 = forms_of(&other)
        .into_iter()
        // (not od's spaced hex: its first and last pieces of 4+ bytes
        // are forms of `v`'s own prefix, which `other` shares)
        .filter(|(f, _)| {
            (f.starts_with("base64") || f.starts_with("hex")) && !f.ends_with("-spaced")
        })
        .map(|(_, b)| String::from_utf8(b).unwrap())
        .collect::<Vec<_>>();
    let mut out = vec![
        String::from_utf8_lossy(&mid).into_owned(),
        String::from_utf8_lossy(&end).into_owned(),
        v[..v.len() - 1].to_string(),
    ];
    out.extend(b64);
    out
}

fn plant(t: &Tree) -> Planted {
    let home = t.path("home");
    let mut expected = Vec::new();
    let mut jsonl = Vec::new();
    let mut clean = Vec::new();

    // 1. A tool-result file of Claude Code: every form of every value,
    //    literally, one per line, with text around it.
    let mut f = FileBuilder::default();
    f.line("$ env".into());
    for (name, v) in VALUES {
        for (form, bytes) in forms_of(v) {
            let owner = owner_of(&bytes, name);
            let l = f.line(format!("out: {} end", String::from_utf8(bytes).unwrap()));
            f.expect(l, owner, form);
        }
    }
    f.write(
        &home.join(".claude/projects/-w-proj/sess-1/tool-results/toolu_9.txt"),
        &mut expected,
    );

    // 2. Claude Code's session JSONL: a tool result holding each value
    //    (written by the JSON encoder: its escape is the form found) and
    //    each encoding free of JSON-special characters.
    let mut f = FileBuilder::default();
    f.line(json!({"type": "summary", "summary": "work", "leafUuid": "x"}).to_string());
    let mut i = 0;
    for (name, v) in VALUES {
        let mut texts: Vec<String> = v
            .lines()
            .filter(|l| v.contains('\n') && l.len() >= 4)
            .map(|l| format!("line: {l}"))
            .collect();
        if !v.contains('\n') {
            texts.push(format!("TOKEN={v} done"));
        }
        for (_, bytes) in forms_of(v) {
            let s = String::from_utf8(bytes).unwrap();
            if json_inner(&s) == s && !s.contains(' ') {
                texts.push(format!("encoded {s} ."));
            }
        }
        for text in texts {
            i += 1;
            f.line(claude_tool_use(i, "printenv"));
            let l = f.line(claude_tool_result(i, &text));
            // The literal in the file: the JSON escape of the piece.
            let piece = text
                .trim_start_matches("line: ")
                .trim_start_matches("TOKEN=")
                .trim_start_matches("encoded ")
                .trim_end_matches(" done")
                .trim_end_matches(" .");
            let lit = json_inner(piece);
            let (n, form) =
                form_named(lit.as_bytes()).unwrap_or_else(|| panic!("{name}: no form is {lit:?}"));
            assert_eq!(n, *name);
            f.expect(l, name, form);
            f.expect(l, name, form);
        }
    }
    let p = home.join(".claude/projects/-w-proj/sess-1.jsonl");
    f.write(&p, &mut expected);
    jsonl.push(p);

    // 3. Codex's rollout: double-encoded output; the values and encodings
    //    free of JSON-special characters survive it literally.
    let mut f = FileBuilder::default();
    f.line(
        json!({"timestamp": "2026-12-03T10:00:00.000Z", "type": "session_meta",
               "payload": {"id": "0193", "cwd": "/w/proj", "originator": "codex_cli_rs"}})
        .to_string(),
    );
    let gh = VALUES[0].1;
    let mut n = 0;
    for (form, bytes) in forms_of(gh) {
        let s = String::from_utf8(bytes).unwrap();
        n += 1;
        let l = f.line(codex_output(n, &format!("export GH_TOKEN={s}\n")));
        f.expect(l, "GH_TOKEN", form);
    }
    let p = home.join(".codex/sessions/2026/12/03/rollout-2026-12-03T10-00-00-0193.jsonl");
    f.write(&p, &mut expected);
    jsonl.push(p);

    // 4. Shell histories.
    let mut f = FileBuilder::default();
    f.line("ls -la".into());
    let l = f.line(format!(
        "curl -H 'Authorization: Bearer {gh}' https://api.example"
    ));
    f.expect(l, "GH_TOKEN", "raw");
    f.line("git status".into());
    let l = f.line(format!("export QUOTED='{}'", "it'\\''s-zqAUD-quoted"));
    f.expect(l, "QUOTED", "shell");
    f.write(&home.join(".bash_history"), &mut expected);

    let mut f = FileBuilder::default();
    f.line(": 1764750000:0;cd src".into());
    let hex = String::from_utf8(
        forms_of(gh)
            .into_iter()
            .find(|(f, _)| *f == "hex")
            .unwrap()
            .1,
    )
    .unwrap();
    let l = f.line(format!(": 1764750001:0;echo {hex} | xxd -r -p"));
    f.expect(l, "GH_TOKEN", "hex");
    f.write(&home.join(".zsh_history"), &mut expected);

    let mut f = FileBuilder::default();
    f.line("- cmd: ls".into());
    f.line("  when: 1764750000".into());
    let l = f.line("- cmd: echo zqAUDline-two-BBBB".into());
    f.expect(l, "MULTI", "line");
    f.line("  when: 1764750001".into());
    f.write(&home.join(".local/share/fish/fish_history"), &mut expected);

    // 5. Claude's session-env and Gemini's logs.
    let mut f = FileBuilder::default();
    let l = f.line(format!("export GH_TOKEN='{gh}'"));
    f.expect(l, "GH_TOKEN", "raw");
    f.write(
        &home.join(".claude/session-env/0193/sessionstart-hook-0.sh"),
        &mut expected,
    );
    let mut f = FileBuilder::default();
    f.line("[".into());
    let l = f.line(format!(
        "  {{\"sessionId\": \"s\", \"type\": \"user\", \"message\": \"{}\"}}",
        json_inner(VALUES[1].1)
    ));
    f.expect(l, "API_KEY", "json");
    f.line("]".into());
    f.write(&home.join(".gemini/tmp/4f1e/logs.json"), &mut expected);

    // 6. Near misses (in a JSONL and a history) and clean files; the
    //    public value planted raw.
    let mut f = FileBuilder::default();
    let mut h = FileBuilder::default();
    for (k, (_, v)) in VALUES.iter().enumerate() {
        let v = v.lines().next().unwrap();
        for (j, miss) in near_misses(v).into_iter().enumerate() {
            f.line(claude_tool_result(k * 100 + j, &miss));
            h.line(format!("echo {miss}"));
        }
    }
    f.line(claude_tool_result(
        999,
        "https://zqAUD-public.example and abc",
    ));
    let p = home.join(".claude/projects/-w-proj/near.jsonl");
    f.write(&p, &mut expected);
    clean.push(p.clone());
    jsonl.push(p);
    let p = home.join(".claude/projects/-w-other/near.txt");
    h.write(&p, &mut expected);
    clean.push(p);
    let p = t.write(
        "home/.claude/projects/-w-other/clean.jsonl",
        format!("{}\n", claude_tool_result(1, "nothing to see")),
    );
    clean.push(p);
    expected.sort();
    Planted {
        expected,
        jsonl,
        clean,
    }
}

fn findings(stdout: &str) -> Vec<String> {
    let mut v: Vec<String> = stdout
        .lines()
        .filter(|l| {
            !l.starts_with("audit: ") && !l.starts_with("fixed ") && !l.starts_with("not fixed ")
        })
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn audit_finds_every_planted_form_and_nothing_else() {
    let t = tree();
    let p = plant(&t);
    // The plant covers every form (and is not trivially small).
    for form in [
        "raw",
        "line",
        "base64",
        "base64url",
        "hex",
        "HEX",
        "percent",
        "json",
        "json-ascii",
        "shell",
        "printf-q",
        "json-go",
    ] {
        assert!(
            p.expected
                .iter()
                .any(|e| e.ends_with(&format!(" ({form})"))),
            "no {form} planted"
        );
    }
    assert!(p.expected.len() >= 60, "{} planted", p.expected.len());
    let o = audit(&t, &[]);
    assert_eq!(o.status, 1, "{}\n{}", o.stdout, o.stderr);
    assert_eq!(findings(&o.stdout), p.expected, "stderr: {}", o.stderr);
    let n = p.expected.len();
    assert!(
        o.stdout
            .contains(&format!("audit: {n} occurrences of 5 variables")),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("rotate it"), "{}", o.stdout);
    assert!(o.stderr.is_empty(), "{}", o.stderr);

    // JSON: the same findings as objects.
    let o = audit(&t, &["--format", "json"]);
    assert_eq!(o.status, 1);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let mut got: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}:{}: {} ({})",
                f["file"].as_str().unwrap(),
                f["line"],
                f["name"].as_str().unwrap(),
                f["form"].as_str().unwrap()
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, p.expected);
    assert_eq!(v["summary"]["occurrences"], n);
    assert_eq!(
        v["summary"]["variables"],
        json!(["API_KEY", "B64_KEY", "GH_TOKEN", "MULTI", "QUOTED"])
    );

    // Named paths: a clean file alone exits 0.
    for c in &p.clean {
        let o = audit(&t, &[c.to_str().unwrap()]);
        assert_eq!(o.status, 0, "{}: {}", c.display(), o.stdout);
        assert!(o.stdout.contains("audit: 0 occurrences"), "{}", o.stdout);
    }
}

#[test]
fn a_shell_that_exported_the_stores_still_finds_their_values() {
    // The caller ran `eval "$(agentenv env)"`: the plain file's values are
    // in its environment, so the session's result sets none of them.
    let t = tree();
    t.write("proj/t.txt", "x ghp_zqAUD1a2b3c4d5e6f7g8h9\n");
    let out = cmd(&t)
        .arg("audit")
        .arg(t.path("proj/t.txt"))
        .env("GH_TOKEN", "ghp_zqAUD1a2b3c4d5e6f7g8h9")
        .env("PUBLIC_URL", "https://zqAUD-public.example")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("GH_TOKEN"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("ghp_zqAUD"), "{stdout}");
}

#[test]
fn missing_default_places_are_skipped_quietly_and_named_at_v() {
    let t = tree();
    let o = audit(&t, &[]);
    assert_eq!(o.status, 0, "{}", o.stdout);
    assert!(o.stderr.is_empty(), "{}", o.stderr);
    assert!(o.stdout.contains("0 files scanned"), "{}", o.stdout);
    let out = cmd(&t).args(["-v", "audit"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(".bash_history does not exist; skipped"),
        "{err}"
    );
    // A named path that does not exist is an error (it is not "clean").
    let o = audit(&t, &["/nonexistent/transcripts"]);
    assert_eq!(o.status, 2);
    assert!(
        o.stderr
            .contains("audit: /nonexistent/transcripts does not exist; nothing searched"),
        "{}",
        o.stderr
    );
    assert!(o.stdout.is_empty(), "{}", o.stdout);
    // Usage errors: exit 2.
    let o = audit(&t, &["--format", "xml"]);
    assert_ne!(o.status, 0);
    let o = audit(&t, &["--bogus"]);
    assert_eq!(o.status, 2);
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn python_parses_jsonl(p: &Path) {
    let out = Command::new("python3")
        .arg("-c")
        .arg("import json,sys\nfor i,l in enumerate(open(sys.argv[1],encoding='utf-8'),1):\n  json.loads(l)\n")
        .arg(p)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{} is not valid JSONL after --fix: {}",
        p.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fix_redacts_in_place_keeps_modes_and_valid_jsonl() {
    let t = tree();
    let p = plant(&t);
    let hist = t.path("home/.bash_history");
    fs::set_permissions(&hist, fs::Permissions::from_mode(0o600)).unwrap();
    let sess = t.path("home/.claude/projects/-w-proj/sess-1.jsonl");
    fs::set_permissions(&sess, fs::Permissions::from_mode(0o640)).unwrap();
    let near_before: Vec<Vec<u8>> = p.clean.iter().map(|c| fs::read(c).unwrap()).collect();

    let o = audit(&t, &["--fix"]);
    assert_eq!(o.status, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains(&format!("fixed {}: 2 occurrences replaced", hist.display())),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("not fixed"), "{}", o.stdout);
    assert!(
        o.stdout.contains("--fix does not un-send it"),
        "{}",
        o.stdout
    );
    assert_eq!(mode(&hist), 0o600);
    assert_eq!(mode(&sess), 0o640);
    for j in &p.jsonl {
        python_parses_jsonl(j);
    }
    let body = fs::read_to_string(&hist).unwrap();
    assert!(body.contains("Bearer [REDACTED:GH_TOKEN]' https"), "{body}");
    assert!(body.contains("ls -la\n"), "{body}");
    let body = fs::read_to_string(&sess).unwrap();
    assert!(body.contains("[REDACTED:API_KEY]"), "{body}");
    // Near misses and clean files are untouched.
    for (c, before) in p.clean.iter().zip(near_before) {
        assert_eq!(fs::read(c).unwrap(), before, "{}", c.display());
    }
    // No temp file is left behind.
    let dir = t.path("home/.claude/projects/-w-proj");
    assert!(fs::read_dir(&dir).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("agentenv")));

    let o = audit(&t, &[]);
    assert_eq!(o.status, 0, "after --fix:\n{}", o.stdout);
    let o = audit(&t, &["--fix"]);
    assert_eq!(o.status, 0);
    assert!(!o.stdout.contains("fixed"), "{}", o.stdout);
}

/// A value that is a bare number in a JSON line cannot become
/// `[REDACTED:NAME]` there (the line would no longer be JSON): it is left,
/// counted and named; the line stays valid.
#[test]
fn fix_leaves_what_is_not_inside_a_json_string() {
    // A number is masked (and looked for) only when declared sensitive.
    let t = Tree::session()
        .file("home/.agents/env", "PIN_CODE='80808080'\n")
        .file(
            "home/.agents/agentenv.toml",
            "[vars]\nPIN_CODE = { sensitive = true }\n",
        );
    let f = t.write(
        "log.jsonl",
        "{\"n\":80808080,\"s\":\"pin 80808080 here\"}\nplain 80808080\n",
    );
    let o = audit(&t, &["--fix", f.to_str().unwrap()]);
    assert_eq!(o.status, 1);
    assert!(
        o.stdout
            .contains("2 occurrences replaced, 1 left (not inside one JSON string"),
        "{}",
        o.stdout
    );
    assert_eq!(
        fs::read_to_string(&f).unwrap(),
        "{\"n\":80808080,\"s\":\"pin [REDACTED:PIN_CODE] here\"}\nplain [REDACTED:PIN_CODE]\n"
    );
    let first = fs::read_to_string(&f).unwrap();
    let first = first.lines().next().unwrap();
    serde_json::from_str::<serde_json::Value>(first).expect("still JSON");
}

#[test]
fn fix_refuses_symlinks_and_foreign_files_and_walks_past_symlinks() {
    let t = tree();
    let gh = VALUES[0].1;
    let outside = t.write("outside/secret.txt", format!("token {gh}\n"));
    let dir = t.mkdir("home/.claude/projects/-w-proj");
    std::os::unix::fs::symlink(&outside, dir.join("link.jsonl")).unwrap();
    // A walked directory does not follow the symlink.
    let o = audit(&t, &[]);
    assert_eq!(o.status, 0, "{}", o.stdout);
    // Named, it is read; --fix refuses it and leaves the target.
    let link = dir.join("link.jsonl");
    let o = audit(&t, &["--fix", link.to_str().unwrap()]);
    assert_eq!(o.status, 1);
    assert!(
        o.stdout
            .contains(&format!("{}:1: GH_TOKEN (raw)", link.display())),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains(&format!("not fixed {}: it is a symlink", link.display())),
        "{}",
        o.stdout
    );
    assert_eq!(
        fs::read_to_string(&outside).unwrap(),
        format!("token {gh}\n")
    );

    // A file another user owns (needs root to make one).
    if rustix::process::geteuid().as_raw() != 0 {
        support::skip("root", "chown a file to another user");
        return;
    }
    let foreign = t.write("home/.bash_history", format!("echo {gh}\n"));
    rustix::fs::chown(&foreign, Some(rustix::fs::Uid::from_raw(4242)), None).unwrap();
    let o = audit(&t, &["--fix"]);
    assert_eq!(o.status, 1);
    assert!(
        o.stdout.contains(&format!(
            "not fixed {}: it is owned by another user (uid 4242)",
            foreign.display()
        )),
        "{}",
        o.stdout
    );
    assert_eq!(
        fs::read_to_string(&foreign).unwrap(),
        format!("echo {gh}\n")
    );
}

/// Memory stays bounded whatever the file: a 96 MiB file without a line
/// end, the value at its very end, is read in chunks (the peak RSS of the
/// process is far below the file's size).
#[test]
fn a_huge_single_line_is_streamed() {
    let t = tree();
    let gh = VALUES[0].1;
    let p = t.path("big.txt");
    let f = fs::File::create(&p).unwrap();
    let size = 96u64 << 20;
    f.set_len(size).unwrap();
    drop(f);
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.seek(SeekFrom::Start(size)).unwrap();
        f.write_all(gh.as_bytes()).unwrap();
    }
    let mut c = Command::new("python3");
    c.arg("-c")
        .arg(
            "import resource,subprocess,sys\n\
             r=subprocess.run(sys.argv[1:],capture_output=True)\n\
             sys.stdout.write(r.stdout.decode())\n\
             print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
             sys.exit(r.returncode)",
        )
        .arg(support::agentenv_bin())
        .args(["audit", p.to_str().unwrap()]);
    let base = cmd(&t);
    c.env_clear()
        .envs(base.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(t.path("proj"));
    let out = c.output().unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{s}");
    assert!(
        s.contains(&format!("{}:1: GH_TOKEN (raw)", p.display())),
        "{s}"
    );
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("MAXRSS_KB "))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(kb < 40 * 1024, "peak RSS {kb} KiB for a 96 MiB file");
}

/// `--all-stores` also looks for a user-store value the project store
/// overrides (the final value alone would miss it).
#[test]
fn all_stores_includes_overridden_values() {
    let t = tree().file("proj/.agents/env", "GH_TOKEN='zqAUD-project-token'\n");
    let f = t.write(
        "t.txt",
        format!("old {}\nnew zqAUD-project-token\n", VALUES[0].1),
    );
    let o = audit(&t, &[f.to_str().unwrap()]);
    assert_eq!(
        findings(&o.stdout),
        vec![format!("{}:2: GH_TOKEN (raw)", f.display())]
    );
    let o = audit(&t, &["--all-stores", f.to_str().unwrap()]);
    assert_eq!(
        findings(&o.stdout),
        vec![
            format!("{}:1: GH_TOKEN (raw)", f.display()),
            format!("{}:2: GH_TOKEN (raw)", f.display())
        ]
    );
}

/// Masked or not: a value only sensitive by default that is a number, a
/// boolean word or under 8 bytes is not looked for; declared `sensitive =
/// true`, it is (from 4 bytes).
#[test]
fn audit_looks_only_for_masked_values() {
    let t = Tree::session().file(
        "home/.agents/env",
        "TIMEOUT='3000'\nFEATURE='true'\nSHORTISH='abcdefg'\nPIN='4242'\nTOKEN='ghp_t0kenvalue'\n",
    );
    let f = t.write(
        "log.txt",
        "timeout 3000 true abcdefg 4242\nthe token ghp_t0kenvalue\n",
    );
    let o = audit(&t, &[f.to_str().unwrap()]);
    assert_eq!(o.status, 1, "{}", o.stdout);
    assert!(o.stdout.contains(":2: TOKEN (raw)"), "{}", o.stdout);
    for name in ["TIMEOUT", "FEATURE", "SHORTISH", "PIN"] {
        assert!(!o.stdout.contains(name), "{name}: {}", o.stdout);
    }
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nPIN = { sensitive = true }\n",
    );
    let o = audit(&t, &[f.to_str().unwrap()]);
    assert!(o.stdout.contains(":1: PIN (raw)"), "{}", o.stdout);
    assert!(!o.stdout.contains("TIMEOUT"), "{}", o.stdout);
}
