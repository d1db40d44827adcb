//! `agentenv dotenv parse | check` through the built binary.

use crate::support;

use serde_json::json;
use support::{Run, Tree};

/// `agentenv dotenv ARGS` in a scratch tree (`$W`).
fn dotenv(t: &Tree, args: &[&str]) -> Run {
    t.host(["dotenv"]).args(args)
}

#[test]
fn parse_defaults_to_json_and_later_files_win() {
    let t = Tree::new()
        .file("a.env", "A=1\nB=\"two words\" # c\nSHARED=a\n")
        .file("b.env", "export SHARED=b\nC='x\ny'\n");
    let j = dotenv(&t, &["parse", &t.arg("a.env"), &t.arg("b.env")])
        .stderr("")
        .run()
        .json();
    assert_eq!(
        j,
        json!({"A": "1", "B": "two words", "SHARED": "b", "C": "x\ny"})
    );
}

#[test]
fn parse_prints_only_the_variables() {
    let t = Tree::new().file("a.env", "bad line\nA=1\nA=2\nU=\"open\n");
    let j = dotenv(&t, &["parse", &t.arg("a.env")])
        .stderr("")
        .run()
        .json();
    assert_eq!(j["A"], "2");
    assert_eq!(j["U"], "\"open");
}

/// A file with a quote to escape.
fn quoting() -> Tree {
    Tree::new().file("a.env", "B=2\nA=it's\n")
}

#[test]
fn parse_as_export() {
    let t = quoting();
    dotenv(&t, &["parse", "--format", "export", &t.arg("a.env")])
        .stdout("export A='it'\\''s'\nexport B='2'\n")
        .run();
}

#[test]
fn parse_as_sh() {
    let t = quoting();
    dotenv(&t, &["parse", "--format", "sh", &t.arg("a.env")])
        .stdout_has("export B='2'")
        .run();
}

#[test]
fn parse_as_auto() {
    let t = quoting();
    dotenv(&t, &["parse", "--format", "auto", &t.arg("a.env")])
        .stdout_has("B")
        .run();
}

#[test]
fn unknown_format_fails_before_reading_files() {
    let err = dotenv(
        &Tree::new(),
        &["parse", "--format", "nope", "/nonexistent/file.env"],
    )
    .status(1)
    .stdout("")
    .stderr_has("json")
    .stderr_lacks("cannot read")
    .run()
    .stderr;
    assert!(err.starts_with("agentenv: error: "), "{err}");
}

#[test]
fn a_missing_file_is_an_error() {
    let t = Tree::new();
    for cmd in ["parse", "check"] {
        dotenv(&t, &[cmd, &t.arg("missing.env")])
            .status(1)
            .stdout("")
            .stderr("agentenv: error: cannot read $W/missing.env: no such file or directory\n")
            .run();
    }
}

#[test]
fn a_directory_is_an_error() {
    let t = Tree::new();
    for cmd in ["parse", "check"] {
        dotenv(&t, &[cmd, t.w()])
            .status(1)
            .stdout("")
            .stderr("agentenv: error: cannot read $W: is a directory\n")
            .run();
    }
}

#[test]
fn parse_fails_when_any_file_is_unreadable() {
    let t = Tree::new().file("a.env", "A=1\n");
    dotenv(&t, &["parse", &t.arg("a.env"), &t.arg("nope")])
        .status(1)
        .stdout("")
        .run();
}

#[test]
fn non_utf8_file_parses_lossily() {
    let t = Tree::new().file("a.env", b"A=x\xffy\nB=\xc3\xa9\n");
    let j = dotenv(&t, &["parse", &t.arg("a.env")]).run().json();
    assert_eq!(j["A"], "x\u{FFFD}y");
    assert_eq!(j["B"], "é");
    dotenv(&t, &["check", &t.arg("a.env")]).stdout("").run();
}

#[test]
fn check_clean_file_is_silent() {
    let t = Tree::new().file(
        "a.env",
        r#"# comment

A=1
export B="x" # note
M='multi
line'
"#,
    );
    dotenv(&t, &["check", &t.arg("a.env")])
        .stdout("")
        .stderr("")
        .run();
}

/// Two warnings in `a.env`; an ignored line and an unterminated quote in
/// `b.env`.
fn findings() -> Tree {
    Tree::new()
        .file("a.env", "A=1\nA=2\nT=\"x\" y\n")
        .file("b.env", "OK=1\nnot an assignment\nU='open\nX=1\nY=2\n")
}

#[test]
fn check_warnings_exit_0() {
    let t = findings();
    dotenv(&t, &["check", &t.arg("a.env")])
        .stderr("")
        .stdout(
            "$W/a.env:2: warning: duplicate key A (earlier on line 1); the later value wins\n\
             $W/a.env:3: warning: double-quoted value of T has text after the closing quote; \
             the whole text is kept literally, quotes included\n",
        )
        .run();
}

#[test]
fn check_errors_exit_1_with_file_and_line() {
    let t = findings();
    dotenv(&t, &["check", &t.arg("a.env"), &t.arg("b.env")])
        .status(1)
        .stderr("")
        .stdout_has("$W/b.env:2: error: ignored line: not an assignment (no '=')\n")
        .stdout_has("$W/b.env:3: error: unterminated single quote for U swallowed 2 lines")
        .stdout_has("$W/a.env:2: warning")
        .run();
}

#[test]
fn check_continues_after_an_unreadable_file() {
    let t = Tree::new().file("a.env", "bad\n");
    dotenv(&t, &["check", &t.arg("missing"), &t.arg("a.env")])
        .status(1)
        .stderr_has("cannot read")
        .stdout_has("$W/a.env:1: error")
        .run();
}

/// A file full of secret-looking values with every kind of bad line.
fn secrets() -> Tree {
    Tree::new().file(
        "secrets.env",
        "\
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
",
    )
}

/// The output of `check` never contains any fragment of a value.
#[test]
fn check_never_shows_a_value() {
    let t = secrets();
    let out = dotenv(&t, &["check", &t.arg("secrets.env")])
        .status(1)
        .secret("canary")
        .secret("sk-live")
        .run()
        .stdout;
    assert!(out.lines().count() >= 8, "{out}");
}

/// Nor does the stderr of either command, not even at `-vv`.
#[test]
fn canary_values_never_leak_on_stderr() {
    let t = secrets();
    for args in [
        &["-vv", "dotenv", "check"][..],
        &["-vv", "dotenv", "parse"],
        &["dotenv", "parse"],
    ] {
        t.host(args)
            .arg(t.arg("secrets.env"))
            .any_status()
            .stderr_lacks("canary")
            .run();
    }
}

#[test]
fn parse_verbose_shows_diagnostics_on_stderr_only() {
    let t = Tree::new().file("a.env", "A=1\nbad-secret-line\n");
    let j = t
        .host(["-v", "dotenv", "parse", &t.arg("a.env")])
        .stderr("agentenv: info: $W/a.env:2: ignored line: not an assignment (no '=')\n")
        .run()
        .json();
    assert_eq!(j, json!({"A": "1"}));
}

#[test]
fn check_counts_lines_after_crlf_and_cr() {
    let t = Tree::new().file("a.env", "A=1\r\nB=2\rbad\r\n\r\nC='open\r\nD=1\r\n");
    dotenv(&t, &["check", &t.arg("a.env")])
        .status(1)
        .stdout(
            "$W/a.env:3: error: ignored line: not an assignment (no '=')\n\
             $W/a.env:5: error: unterminated single quote for C swallowed 1 line \
             (the value runs to the end of the file; 1 assignment on them lost: D)\n",
        )
        .run();
}

#[test]
fn parse_reads_lines_the_same_as_the_library() {
    let content = r#"export A="x\ny"
B='it\'s'
C=`t`#c
D=a #b
M="l1
l2"
__proto__=p
"#;
    let t = Tree::new().file("a.env", content);
    let j = dotenv(&t, &["parse", &t.arg("a.env")]).run().json();
    let m = j.as_object().unwrap();
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

/// A missing closing quote on line 1; line 4's quote closes it instead,
/// so B and C are silently part of A's value.
fn swallowed() -> Tree {
    Tree::new().file(
        "a.env",
        "A=\"v1SECRET\nB=v2SECRET\nexport C=v3SECRET\nD=\"\nPEM='-----BEGIN-----\nMIIBOgIBAAJBAKj34GkxFhD+/x==\nAbC123==\nnot prose = here\n-----END-----'\n",
    )
}

#[test]
fn check_reports_a_closed_multi_line_value_that_swallowed_assignments() {
    let t = swallowed();
    dotenv(&t, &["check", &t.arg("a.env")])
        .status(1)
        .stdout(
            "$W/a.env:1: error: double-quoted value of A spans 4 lines and swallowed 3 lines \
             that look like assignments (B, C, D); is a closing quote missing?\n",
        )
        .run();
}

#[test]
fn a_swallowing_value_still_parses_as_the_reference() {
    let t = swallowed();
    let j = dotenv(&t, &["parse", &t.arg("a.env")]).run().json();
    assert_eq!(j["A"], "v1SECRET\nB=v2SECRET\nexport C=v3SECRET\nD=");
    assert!(j.get("PEM").is_some() && j.get("B").is_none());
}
