//! `agentenv dotenv parse | check` through the built binary.

mod support;

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::{Path, PathBuf};

fn agentenv() -> Command {
    Command::new(support::agentenv_bin())
}

fn write(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

fn json_of(out: &[u8]) -> serde_json::Map<String, serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(out).expect("valid JSON");
    v.as_object().expect("an object").clone()
}

#[test]
fn parse_defaults_to_json_and_later_files_win() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"A=1\nB=\"two words\" # c\nSHARED=a\n");
    let b = write(d.path(), "b.env", b"export SHARED=b\nC='x\ny'\n");
    let out = agentenv()
        .args(["dotenv", "parse"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let m = json_of(&out);
    assert_eq!(m["A"], "1");
    assert_eq!(m["B"], "two words");
    assert_eq!(m["SHARED"], "b");
    assert_eq!(m["C"], "x\ny");
    assert_eq!(m.len(), 4);
}

#[test]
fn parse_prints_only_the_variables() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"bad line\nA=1\nA=2\nU=\"open\n");
    let out = agentenv()
        .args(["dotenv", "parse"])
        .arg(&a)
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let m = json_of(&out);
    assert_eq!(m["A"], "2");
    assert_eq!(m["U"], "\"open");
}

#[test]
fn parse_other_formats() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"B=2\nA=it's\n");
    agentenv()
        .args(["dotenv", "parse", "--format", "export"])
        .arg(&a)
        .assert()
        .success()
        .stdout("export A='it'\\''s'\nexport B='2'\n");
    agentenv()
        .args(["dotenv", "parse", "--format", "sh"])
        .arg(&a)
        .assert()
        .success()
        .stdout(predicate::str::contains("export B='2'"));
    agentenv()
        .args(["dotenv", "parse", "--format", "auto"])
        .arg(&a)
        .assert()
        .success()
        .stdout(predicate::str::contains("B"));
}

#[test]
fn unknown_format_fails_before_reading_files() {
    agentenv()
        .args([
            "dotenv",
            "parse",
            "--format",
            "nope",
            "/nonexistent/file.env",
        ])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            predicate::str::starts_with("agentenv: error: ")
                .and(predicate::str::contains("json"))
                .and(predicate::str::contains("cannot read").not()),
        );
}

#[test]
fn missing_file_and_directory() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("missing.env");
    for cmd in ["parse", "check"] {
        agentenv()
            .args(["dotenv", cmd])
            .arg(&missing)
            .assert()
            .code(1)
            .stdout("")
            .stderr(format!(
                "agentenv: error: cannot read {}: no such file or directory\n",
                missing.display()
            ));
        agentenv()
            .args(["dotenv", cmd])
            .arg(d.path())
            .assert()
            .code(1)
            .stdout("")
            .stderr(format!(
                "agentenv: error: cannot read {}: is a directory\n",
                d.path().display()
            ));
    }
}

#[test]
fn parse_fails_when_any_file_is_unreadable() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"A=1\n");
    agentenv()
        .args(["dotenv", "parse"])
        .arg(&a)
        .arg(d.path().join("nope"))
        .assert()
        .code(1)
        .stdout("");
}

#[test]
fn non_utf8_file_parses_lossily() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"A=x\xffy\nB=\xc3\xa9\n");
    let out = agentenv()
        .args(["dotenv", "parse"])
        .arg(&a)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let m = json_of(&out);
    assert_eq!(m["A"], "x\u{FFFD}y");
    assert_eq!(m["B"], "é");
    agentenv()
        .args(["dotenv", "check"])
        .arg(&a)
        .assert()
        .success()
        .stdout("");
}

#[test]
fn check_clean_file_is_silent() {
    let d = tempfile::tempdir().unwrap();
    let a = write(
        d.path(),
        "a.env",
        b"# comment\n\nA=1\nexport B=\"x\" # note\nM='multi\nline'\n",
    );
    agentenv()
        .args(["dotenv", "check"])
        .arg(&a)
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

#[test]
fn check_reports_file_line_and_exit_code() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"A=1\nA=2\nT=\"x\" y\n");
    let b = write(
        d.path(),
        "b.env",
        b"OK=1\nnot an assignment\nU='open\nX=1\nY=2\n",
    );
    let a_s = a.display().to_string();
    let b_s = b.display().to_string();
    // Warnings only: exit 0.
    agentenv()
        .args(["dotenv", "check"])
        .arg(&a)
        .assert()
        .success()
        .stderr("")
        .stdout(format!(
            "{a_s}:2: warning: duplicate key A (earlier on line 1); the later value wins\n\
             {a_s}:3: warning: double-quoted value of T has text after the closing quote; \
             the whole text is kept literally, quotes included\n"
        ));
    // An ignored line and an unterminated quote: exit 1.
    agentenv()
        .args(["dotenv", "check"])
        .arg(&a)
        .arg(&b)
        .assert()
        .code(1)
        .stderr("")
        .stdout(
            predicate::str::contains(format!(
                "{b_s}:2: error: ignored line: not an assignment (no '=')\n"
            ))
            .and(predicate::str::contains(format!(
                "{b_s}:3: error: unterminated single quote for U swallowed 2 lines"
            )))
            .and(predicate::str::contains(format!("{a_s}:2: warning"))),
        );
}

#[test]
fn check_continues_after_an_unreadable_file() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"bad\n");
    agentenv()
        .args(["dotenv", "check"])
        .arg(d.path().join("missing"))
        .arg(&a)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot read"))
        .stdout(predicate::str::contains(format!(
            "{}:1: error",
            a.display()
        )));
}

/// A file full of secret-looking values with every kind of bad line: the
/// output of `check` and the stderr of both commands never contain any
/// fragment of a value (not even at `-vv`).
#[test]
fn canary_values_never_leak() {
    let d = tempfile::tempdir().unwrap();
    let content = "\
API_KEY=canaryAAA1-sk-live
canaryBBB2-bare-token-line
9BAD=canaryCCC3
BAD-KEY=canaryDDD4
K: canaryEEE5
export canaryFFF6
QUOTED=\"canaryGGG7\" canaryHHH8
SINGLE='canaryIII9' trailing-canaryJJJ0
API_KEY=canaryKKK1
BT=`canaryLLL2
NUL=canaryMMM3\0canaryNNN4
\u{2028}canaryOOO5
MULTI=\"canaryPPP6
canaryQQQ7\" canaryRRR8
OPEN='canarySSS9
canaryTTT0=1
# canaryUUU1
canaryVVV2
";
    let f = write(d.path(), "secrets.env", content.as_bytes());
    let check = agentenv()
        .args(["dotenv", "check"])
        .arg(&f)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stdout = String::from_utf8(check.stdout.clone()).unwrap();
    assert!(stdout.lines().count() >= 8, "{stdout}");
    for out in [&check.stdout, &check.stderr] {
        let s = String::from_utf8_lossy(out);
        assert!(!s.contains("canary"), "leaked: {s}");
        assert!(!s.contains("sk-live"), "leaked: {s}");
    }
    for args in [
        vec!["-vv", "dotenv", "check"],
        vec!["-vv", "dotenv", "parse"],
        vec!["dotenv", "parse"],
    ] {
        let o = agentenv().args(&args).arg(&f).output().unwrap();
        let s = String::from_utf8_lossy(&o.stderr);
        assert!(!s.contains("canary"), "{args:?} leaked on stderr: {s}");
    }
}

#[test]
fn parse_verbose_shows_diagnostics_on_stderr_only() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.env", b"A=1\nbad-secret-line\n");
    let o = agentenv()
        .args(["-v", "dotenv", "parse"])
        .arg(&a)
        .assert()
        .success()
        .get_output()
        .clone();
    let m = json_of(&o.stdout);
    assert_eq!(m.len(), 1);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "agentenv: info: {}:2: ignored line: not an assignment (no '=')\n",
            a.display()
        )
    );
}

#[test]
fn check_counts_lines_after_crlf_and_cr() {
    let d = tempfile::tempdir().unwrap();
    let a = write(
        d.path(),
        "a.env",
        b"A=1\r\nB=2\rbad\r\n\r\nC='open\r\nD=1\r\n",
    );
    let s = a.display().to_string();
    agentenv()
        .args(["dotenv", "check"])
        .arg(&a)
        .assert()
        .code(1)
        .stdout(format!(
            "{s}:3: error: ignored line: not an assignment (no '=')\n\
             {s}:5: error: unterminated single quote for C swallowed 1 line \
             (the value runs to the end of the file; 1 assignment on them lost: D)\n"
        ));
}

#[test]
fn parse_reads_lines_the_same_as_the_library() {
    let d = tempfile::tempdir().unwrap();
    let content = "export A=\"x\\ny\"\nB='it\\'s'\nC=`t`#c\nD=a #b\nM=\"l1\nl2\"\n__proto__=p\n";
    let a = write(d.path(), "a.env", content.as_bytes());
    let out = agentenv()
        .args(["dotenv", "parse"])
        .arg(&a)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let m = json_of(&out);
    let lib = agentenv::dotenv::parse(content);
    assert_eq!(m.len(), lib.entries.len());
    for e in &lib.entries {
        assert_eq!(m[&e.key], e.value.as_str(), "{}", e.key);
    }
    assert_eq!(m["A"], "x\ny");
    assert_eq!(m["B"], "it\\'s");
    assert_eq!(m["M"], "l1\nl2");
    assert_eq!(m["__proto__"], "p");
}

#[test]
fn check_reports_a_closed_multi_line_value_that_swallowed_assignments() {
    let d = tempfile::tempdir().unwrap();
    // A missing closing quote on line 1; line 4's quote closes it instead,
    // so B and C are silently part of A's value.
    let a = write(
        d.path(),
        "a.env",
        b"A=\"v1SECRET\nB=v2SECRET\nexport C=v3SECRET\nD=\"\nPEM='-----BEGIN-----\nMIIBOgIBAAJBAKj34GkxFhD+/x==\nAbC123==\nnot prose = here\n-----END-----'\n",
    );
    let s = a.display().to_string();
    agentenv()
        .args(["dotenv", "check"])
        .arg(&a)
        .assert()
        .code(1)
        .stdout(format!(
            "{s}:1: error: double-quoted value of A spans 4 lines and swallowed 3 lines \
             that look like assignments (B, C, D); is a closing quote missing?\n"
        ));
    // The value itself is still the reference's (parse is unchanged).
    let out = agentenv()
        .args(["dotenv", "parse"])
        .arg(&a)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let m = json_of(&out);
    assert_eq!(m["A"], "v1SECRET\nB=v2SECRET\nexport C=v3SECRET\nD=");
    assert!(m.contains_key("PEM") && !m.contains_key("B"));
}
