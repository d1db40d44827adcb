//! Warnings are data: a Rust caller of `session::assemble` gets no stderr
//! it did not ask for. Every warning of the run (a refused system store,
//! duplicate overlays, a bad `$AGENTS_ENV_TIMEOUT`, a plain file bash
//! fails, an `env.py` that exits non-zero) is a note on the assembly, in
//! the order it happened; and `render::render` prints nothing either (what
//! a format leaves out is data, from `render_checked`).
//!
//! The check runs in a child process (this test binary, re-run with
//! `AGENTENV_QUIET_CHILD=1`): stderr is the process's, so only a separate
//! process shows what the library wrote to it.

use agentenv::core::{Env, Level};
use agentenv::render::{render, render_checked, Format, View};
use agentenv::session::{self, Options};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

const CHILD: &str = "AGENTENV_QUIET_CHILD";

/// The child's side: assemble a store that makes every kind of warning and
/// print the notes on stdout, one per line.
fn child(w: &Path) {
    let store = w.join("home/.agents");
    std::fs::create_dir_all(store.join("overlays/my_tool")).unwrap();
    std::fs::create_dir_all(store.join("overlays/my.tool")).unwrap();
    std::fs::create_dir_all(w.join("proj")).unwrap();
    std::fs::write(store.join("pre.env"), "false\n").unwrap();
    std::fs::write(store.join("env.py"), "import sys\nsys.exit(3)\n").unwrap();
    let mut base = Env::new();
    base.insert("HOME".into(), w.join("home").into());
    base.insert("PATH".into(), std::env::var_os("PATH").unwrap());
    base.insert("AGENTS_SYSTEM_ROOT".into(), "relative/system".into());
    base.insert("AGENTS_ENV_TIMEOUT".into(), "soon".into());
    let opts = Options {
        cwd: Some(w.join("proj")),
        global: true,
        ..Default::default()
    };
    let s = session::assemble(&opts, base).expect("scope resolves");
    for n in s.assembly.notes() {
        let tag = match n.level {
            Level::Warning => "warning",
            Level::Info => "info",
            Level::Debug => "debug",
        };
        println!("NOTE {tag}: {}", n.text);
    }
    // Rendering is quiet too: a value the github format cannot carry is
    // left out silently by `render`, and reported as data by
    // `render_checked` (the CLI prints it as a warning).
    let view = View::of([(OsString::from("WITHCR"), OsString::from("a\rb"))]);
    assert!(!render(Format::Github, &view).contains("WITHCR"));
    let r = render_checked(Format::Github, &view);
    assert_eq!(r.omitted.len(), 1);
    println!("RENDERED omitted {}", r.omitted.len());
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn a_library_caller_gets_no_stderr_and_every_warning_as_a_note() {
    let d = tempfile::tempdir().unwrap();
    if std::env::var_os(CHILD).is_some() {
        child(Path::new(&std::env::var_os("AGENTENV_QUIET_DIR").unwrap()));
        return;
    }
    // This test's name in the test binary: its module path without the
    // crate's name.
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    let name = format!("{module}::a_library_caller_gets_no_stderr_and_every_warning_as_a_note");
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("AGENTENV_QUIET_DIR", d.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stderr, "", "the library wrote to stderr");
    assert!(stdout.contains("RENDERED omitted 1"), "{stdout}");
    let w = d.path();
    let store = w.join("home/.agents");
    // libtest's "test NAME ... " may precede the first line.
    let notes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.find("NOTE ").map(|i| &l[i..]))
        .collect();
    let warnings: Vec<&str> = notes
        .iter()
        .filter_map(|l| l.strip_prefix("NOTE warning: "))
        .collect();
    assert_eq!(
        warnings,
        [
            "ignoring $AGENTS_SYSTEM_ROOT: not an absolute path".to_string(),
            format!(
                "overlays my.tool and my_tool in {} are one overlay (my-tool) and share \
                 MY_TOOL_OVERLAY_ROOT; remove one",
                store.join("overlays").display()
            ),
            "ignoring $AGENTS_ENV_TIMEOUT: not a positive number of seconds; using 30 s"
                .to_string(),
            format!(
                "env file source failed: {}; the whole file was dropped (a syntax error, an exit or a failing last command; bash -n shows a syntax error's line)",
                store.join("pre.env").display()
            ),
            format!("env.py failed (exit 3): {}", store.join("env.py").display()),
        ]
    );
    // Each env file's `-v` line comes after that file's warning.
    let pos = |needle: &str| notes.iter().position(|l| l.contains(needle)).unwrap();
    assert!(pos("env file source failed") < pos("layer plain file (user)"));
    assert!(pos("layer plain file (user)") < pos("env.py failed (exit 3)"));
    assert!(pos("env.py failed (exit 3)") < pos("layer env.py (user)"));
    assert!(notes
        .iter()
        .any(|l| l.starts_with("NOTE debug: ") && l.ends_with("pre.env: sourced with bash")));
}
