//! `agentenv set` (docs/audit-set.md#audit-and-set) through a pseudo-terminal
//! (`tests/it/support/pty_run.py`, Python's stdlib `pty`): the value is typed
//! twice with echo off, written into the store file in place (0600, every
//! other line kept), an allowed store stays allowed; without a terminal it
//! refuses and writes nothing.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::Tree;

const VALUE: &str = "zqSETvalue-9f3k'x";

fn driver() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/pty_run.py")
}

struct Typed {
    out: String,
    status: Option<i64>,
    echo_after: Option<bool>,
}

/// Run `agentenv ARGS` on a new terminal in the session environment of
/// `t`, answering the prompts with `steps` ([wait_for, type]).
fn on_tty(t: &Tree, args: &[&str], steps: &[(&str, &str)]) -> Typed {
    let mut argv = vec![support::agentenv_bin().to_string_lossy().into_owned()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let steps: Vec<[&str; 2]> = steps.iter().map(|(a, b)| [*a, *b]).collect();
    let mut c = Command::new("python3");
    c.arg(driver())
        .arg(serde_json::to_string(&argv).unwrap())
        .arg(serde_json::to_string(&steps).unwrap());
    session_env(&mut c, t);
    let out = c.output().expect("python3 runs the pty driver");
    assert!(
        out.status.success(),
        "driver: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"].is_null(), "driver: {v}");
    Typed {
        out: v["out"].as_str().unwrap().to_string(),
        status: v["status"].as_i64(),
        echo_after: v["echo_after"].as_bool(),
    }
}

fn session_env(c: &mut Command, t: &Tree) {
    c.env_clear()
        .env("HOME", t.path("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("TERM", "dumb")
        .env("XDG_STATE_HOME", t.path("state"))
        .env("AGENTS_PYTHON", support::pinned_python())
        .env("AGENTS_SYSTEM_ROOT", t.path("no-system"))
        .current_dir(t.path("proj"));
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

const LOCAL: &str =
    "# keys for this project\nA=1\nTOKEN=old-one # rotated in May\n\nexport B='x y'\n";

#[test]
fn set_reads_twice_without_echo_and_replaces_in_place() {
    let t = Tree::session().file("proj/.agents/local.env", LOCAL);
    let file = t.path("proj/.agents/local.env");
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    let typed = format!("{VALUE}\r");
    let r = on_tty(
        &t,
        &["set", "TOKEN", "--project", "."],
        &[("Value for TOKEN: ", &typed), ("confirm TOKEN: ", &typed)],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    assert!(!r.out.contains("zqSET"), "echoed: {:?}", r.out);
    assert!(r.out.contains("set TOKEN in "), "{:?}", r.out);
    assert!(r.out.contains("local.env"), "{:?}", r.out);
    assert_eq!(
        r.echo_after,
        Some(true),
        "the terminal's echo was not restored"
    );
    let want = LOCAL.replace("TOKEN=old-one", "TOKEN=\"zqSETvalue-9f3k'x\"");
    assert_eq!(fs::read_to_string(&file).unwrap(), want);
    assert_eq!(mode(&file), 0o600);
    // The session reads the value back exactly.
    let mut c = support::session_cmd(t.root());
    c.args(["env", "--format", "json"]);
    let out = c.output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["TOKEN"], VALUE);
}

#[test]
fn set_user_store_creates_the_env_file_0600() {
    let t = Tree::session();
    let r = on_tty(
        &t,
        &["set", "NEW_KEY", "--user"],
        &[
            ("Value for NEW_KEY: ", "abc def\r"),
            ("confirm NEW_KEY: ", "abc def\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    let file = t.path("home/.agents/env");
    assert_eq!(fs::read_to_string(&file).unwrap(), "NEW_KEY='abc def'\n");
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&t.path("home/.agents")), 0o700);
}

#[test]
fn erase_keys_edit_the_hidden_line() {
    let t = Tree::session().dir("proj/.agents");
    // "abX" + Backspace + "c" = "abc"; "zz" + Ctrl-U + "abc" = "abc".
    let r = on_tty(
        &t,
        &["set", "K1"],
        &[
            ("Value for K1: ", "abX\x7fcd\r"),
            ("confirm K1: ", "zz\x15abcd\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    assert_eq!(
        fs::read_to_string(t.path("proj/.agents/local.env")).unwrap(),
        "K1='abcd'\n"
    );
}

#[test]
fn a_mismatch_or_ctrl_c_writes_nothing_and_restores_the_terminal() {
    let t = Tree::session().file("proj/.agents/local.env", LOCAL);
    let file = t.path("proj/.agents/local.env");
    let r = on_tty(
        &t,
        &["set", "TOKEN"],
        &[
            ("Value for TOKEN: ", "one-value\r"),
            ("confirm TOKEN: ", "two-value\r"),
        ],
    );
    assert_eq!(r.status, Some(1), "{}", r.out);
    assert!(r.out.contains("differ; nothing written"), "{}", r.out);
    assert!(!r.out.contains("-value"), "{}", r.out);
    assert_eq!(fs::read_to_string(&file).unwrap(), LOCAL);
    assert_eq!(r.echo_after, Some(true));

    let r = on_tty(&t, &["set", "TOKEN"], &[("Value for TOKEN: ", "half\x03")]);
    assert_eq!(r.status, Some(130), "{}", r.out);
    assert!(r.out.contains("cancelled; nothing written"), "{}", r.out);
    assert!(!r.out.contains("half"), "{}", r.out);
    assert_eq!(fs::read_to_string(&file).unwrap(), LOCAL);
    assert_eq!(r.echo_after, Some(true), "Ctrl-C left echo off");

    // SIGTERM and SIGHUP at the prompt: the terminal comes back too.
    for (sig, status) in [("15", 143), ("1", 129)] {
        let r = on_tty(
            &t,
            &["set", "TOKEN"],
            &[
                ("Value for TOKEN: ", "half"),
                ("", &format!("!signal:{sig}")),
            ],
        );
        assert_eq!(r.status, Some(status), "{}", r.out);
        assert!(!r.out.contains("half"), "{}", r.out);
        assert_eq!(fs::read_to_string(&file).unwrap(), LOCAL);
        assert_eq!(r.echo_after, Some(true), "signal {sig} left echo off");
    }
}

#[test]
fn an_allowed_store_stays_allowed() {
    let t = Tree::session().file("proj/.agents/local.env", LOCAL);
    let mut allow = Command::new(support::agentenv_bin());
    session_env(&mut allow, &t);
    assert!(allow.arg("allow").output().unwrap().status.success());
    let r = on_tty(
        &t,
        &["set", "TOKEN"],
        &[
            ("Value for TOKEN: ", "v-allowed\r"),
            ("confirm TOKEN: ", "v-allowed\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    assert!(!r.out.contains("not allowed"), "{}", r.out);
    // --require-trust loads the store (no warning) and sees the new value.
    let mut env = Command::new(support::agentenv_bin());
    session_env(&mut env, &t);
    let out = env
        .args(["env", "--require-trust", "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["TOKEN"], "v-allowed");

    // A store that was not allowed stays not allowed, and set says so.
    let t = Tree::session().file("proj/.agents/local.env", LOCAL);
    let r = on_tty(
        &t,
        &["set", "TOKEN"],
        &[
            ("Value for TOKEN: ", "v-other\r"),
            ("confirm TOKEN: ", "v-other\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    assert!(r.out.contains("is not allowed"), "{}", r.out);
}

/// Without a controlling terminal (`setsid`: a new session has none) set
/// refuses before reading anything, and nothing is written.
#[test]
fn without_a_terminal_set_refuses_and_writes_nothing() {
    let Some(setsid) = support::tool("setsid") else {
        return;
    };
    let t = Tree::session().file("proj/.agents/local.env", LOCAL);
    let file = t.path("proj/.agents/local.env");
    let mut c = Command::new(setsid);
    c.arg("-w")
        .arg(support::agentenv_bin())
        .args(["set", "TOKEN"]);
    session_env(&mut c, &t);
    let out = c
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut ch| {
            use std::io::Write;
            // What an agent would try: the value on stdin.
            let _ = ch
                .stdin
                .take()
                .unwrap()
                .write_all(b"piped-value\npiped-value\n");
            ch.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no terminal to read the value from"), "{err}");
    assert!(!err.contains("piped-value"), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), LOCAL);
}

#[test]
fn usage_errors_and_files_set_cannot_rewrite() {
    let t = Tree::session()
        .file("proj/.agents/local.env", "A=$(date)\nTOKEN=1\n")
        .dir("home/.agents");
    let run = |args: &[&str]| {
        let mut c = Command::new(support::agentenv_bin());
        session_env(&mut c, &t);
        c.args(args).output().unwrap()
    };
    for bad in ["1ABC", "A-B", ""] {
        let out = run(&["set", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a variable name"));
    }
    assert_eq!(run(&["set", "UID"]).status.code(), Some(2));
    assert_eq!(
        run(&["set", "A", "--user", "--project", "."]).status.code(),
        Some(2)
    );
    assert_eq!(run(&["set", "A", "--file", "../x"]).status.code(), Some(2));
    assert_eq!(
        run(&["set", "A", "--user", "--file", "local.env"])
            .status
            .code(),
        Some(2)
    );
    // A project directory that does not exist is not created.
    let out = run(&["set", "A", "--project", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
    assert!(!t.path("proj/no").exists());
    // A file the editor does not follow is refused before any prompt,
    // naming the file and line.
    let out = run(&["set", "TOKEN"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("local.env: line 1 holds shell code ($(…))"),
        "{err}"
    );
}

// ------------------------------------------------ the first hour (issue 33)

#[test]
fn set_project_makes_git_ignore_the_local_files_and_says_so() {
    let t = Tree::session().dir("proj/sub");
    let r = on_tty(
        &t,
        &["set", "TOKEN", "--project", "."],
        &[
            ("Value for TOKEN: ", "v-1234\r"),
            ("confirm TOKEN: ", "v-1234\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    let ignore = t.path("proj/.agents/.gitignore");
    let text = fs::read_to_string(&ignore).unwrap();
    assert!(text.lines().any(|l| l == "/local.env"), "{text}");
    assert!(text.lines().any(|l| l == "/pre.local.env"), "{text}");
    assert!(
        r.out.contains(".gitignore so that git ignores local.env"),
        "{}",
        r.out
    );
    // No `/./` in what it printed, and the same trust note as for a store
    // that existed before.
    assert!(!r.out.contains("/./"), "{}", r.out);
    assert!(
        r.out
            .contains("is not allowed: the shell hook and --require-trust do not load it"),
        "{}",
        r.out
    );
    // Git itself ignores the file.
    if let Some(git) = support::tool("git") {
        let run = |args: &[&str]| {
            Command::new(&git)
                .args(args)
                .current_dir(t.path("proj"))
                .env("HOME", t.path("home"))
                .output()
                .unwrap()
        };
        assert!(run(&["init", "-q"]).status.success());
        let o = run(&["check-ignore", "-q", ".agents/local.env"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "git does not ignore .agents/local.env"
        );
    }
    // A second set leaves an existing, complete .gitignore alone.
    let before = fs::read_to_string(&ignore).unwrap();
    let r = on_tty(
        &t,
        &["set", "OTHER", "--project", "."],
        &[
            ("Value for OTHER: ", "w-1234\r"),
            ("confirm OTHER: ", "w-1234\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    assert_eq!(fs::read_to_string(&ignore).unwrap(), before);
    assert!(!r.out.contains(".gitignore"), "{}", r.out);
}

#[test]
fn set_keeps_an_allowed_store_allowed_after_adding_its_gitignore() {
    let t = Tree::session().file("proj/.agents/env", "A=1\n");
    let mut c = support::session_cmd(t.root());
    c.env("XDG_STATE_HOME", t.path("state")).arg("allow");
    assert!(c.output().unwrap().status.success());
    let r = on_tty(
        &t,
        &["set", "TOKEN"],
        &[
            ("Value for TOKEN: ", "v-1234\r"),
            ("confirm TOKEN: ", "v-1234\r"),
        ],
    );
    assert_eq!(r.status, Some(0), "{}", r.out);
    assert!(t.path("proj/.agents/.gitignore").is_file());
    assert!(!r.out.contains("not allowed"), "{}", r.out);
    let mut c = support::session_cmd(t.root());
    c.env("XDG_STATE_HOME", t.path("state")).arg("status");
    let out = String::from_utf8(c.output().unwrap().stdout).unwrap();
    assert!(out.contains("trust: allowed"), "{out}");
}

#[test]
fn a_pasted_multi_line_value_is_refused_with_what_to_do() {
    let t = Tree::session();
    let pem = "-----BEGIN KEY-----\rMIIEabcd\r-----END KEY-----\r";
    let r = on_tty(
        &t,
        &["set", "PEM_KEY", "--user"],
        &[("Value for PEM_KEY: ", pem)],
    );
    assert_eq!(r.status, Some(1), "{}", r.out);
    assert!(r.out.contains("spans several lines"), "{}", r.out);
    assert!(r.out.contains("by hand"), "{}", r.out);
    assert!(!r.out.contains("differ"), "{}", r.out);
    assert!(!r.out.contains("MIIE"), "the value was echoed: {}", r.out);
    assert!(!t.path("home/.agents/env").exists());
    assert_eq!(r.echo_after, Some(true));
}
