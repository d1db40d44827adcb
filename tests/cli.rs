//! The command line as a whole: help, version, completions, verbosity and
//! usage errors.

mod support;

use std::fs;
use std::process::{Command, Output};

fn agentenv(args: &[&str]) -> Output {
    Command::new(support::agentenv_bin())
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn help_lists_only_commands_that_run() {
    let out = agentenv(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert_eq!(
        commands,
        [
            "env",
            "exec",
            "explain",
            "launch",
            "harness",
            "dotenv",
            "completions",
            "hook",
            "allow",
            "deny",
            "init",
            "status",
            "man"
        ]
    );
    for c in commands {
        let out = agentenv(&[c, "--help"]);
        assert!(out.status.success(), "{c} --help");
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains("not implemented"), "{c}");
    }
}

#[test]
fn version_prints_the_crate_version() {
    let out = agentenv(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("agentenv {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(agentenv(&["no-such-command"]).status.code(), Some(2));
    assert_eq!(agentenv(&["env", "--no-such-flag"]).status.code(), Some(2));
    assert_eq!(agentenv(&["env", "--format"]).status.code(), Some(2));
    assert_eq!(agentenv(&["completions", "tcsh"]).status.code(), Some(2));
    assert_eq!(agentenv(&[]).status.code(), Some(2));
}

/// Each completion script is accepted by its shell's parser.
#[test]
#[cfg_attr(
    any(missing = "bash", missing = "zsh", missing = "fish"),
    ignore = "needs bash, zsh and fish"
)]
fn completions_parse_in_their_shells() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, check) in [
        ("bash", vec!["bash", "-n"]),
        ("zsh", vec!["zsh", "-n"]),
        ("fish", vec!["fish", "--no-execute"]),
        ("powershell", vec![]),
    ] {
        let out = agentenv(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("agentenv"), "{shell}");
        for sub in ["env", "launch", "harness", "sandbox-env"] {
            assert!(script.contains(sub), "{shell} completes {sub}");
        }
        if check.is_empty() {
            continue;
        }
        let Some(bin) = support::tool(check[0]) else {
            continue;
        };
        let file = dir.path().join(format!("completion.{shell}"));
        fs::write(&file, &script).unwrap();
        let st = Command::new(bin)
            .args(&check[1..])
            .arg(&file)
            .status()
            .unwrap();
        assert!(st.success(), "{shell} rejects its completion script");
    }
}

/// A store whose env.py fails: one warning by default, none with -q or
/// -qq; `-q` still shows errors, `-qq` shows nothing at all.
#[test]
fn verbosity_flags_filter_log_lines() {
    let w = tempfile::tempdir().unwrap();
    let home = w.path().join("home");
    let proj = w.path().join("proj");
    fs::create_dir_all(home.join(".agents")).unwrap();
    fs::create_dir_all(&proj).unwrap();
    fs::write(home.join(".agents/env.py"), "import sys\nsys.exit(3)\n").unwrap();
    let run = |args: &[&str]| support::session_cmd(w.path()).args(args).output().unwrap();
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();

    let normal = run(&["env", "--format", "json", "--diff"]);
    assert!(normal.status.success());
    assert!(stderr(&normal).contains("agentenv: warning: env.py failed (exit 3)"));

    for q in ["-q", "-qq"] {
        let quiet = run(&[q, "env", "--format", "json", "--diff"]);
        assert!(quiet.status.success());
        assert_eq!(stderr(&quiet), "", "{q}");
        assert_eq!(quiet.stdout, normal.stdout, "{q} changes only stderr");
    }

    let err_q = run(&["-q", "env", "--format", "nope"]);
    assert_eq!(err_q.status.code(), Some(1));
    assert!(stderr(&err_q).starts_with("agentenv: error: --format must be one of"));
    let err_qq = run(&["-qq", "env", "--format", "nope"]);
    assert_eq!(err_qq.status.code(), Some(1));
    assert_eq!(stderr(&err_qq), "");

    // Flags work after the subcommand too.
    let after = run(&["env", "--format", "json", "--diff", "-qq"]);
    assert_eq!(stderr(&after), "");
}

/// Files that can hold values (`launch --report`, `harness sandbox-env
/// -o`; `--into` in tests/into.rs): new ones 0600, an existing readable one
/// keeps its mode with one warning naming it, another user's symlink in a
/// sticky world-writable directory is not followed.
#[test]
fn value_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    fs::create_dir_all(w.join("fs/harness")).unwrap();
    let h = w.join("fs/harness/h.yaml");
    fs::write(
        &h,
        "agent: a\nrole: r\nenv:\n  sandbox:\n    SB: 'zqCANARYsb'\n",
    )
    .unwrap();
    let mode = |p: &std::path::Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    type Writer<'a> = Box<dyn Fn(&std::path::Path) -> Output + 'a>;
    let writers: [(&str, Writer); 2] = [
        (
            "launch --report",
            Box::new(|p: &std::path::Path| {
                Command::new(support::agentenv_bin())
                    .current_dir(&w)
                    .args(["launch", "--no-env", "--report"])
                    .arg(p)
                    .args(["--", "true"])
                    .output()
                    .unwrap()
            }),
        ),
        (
            "harness sandbox-env -o",
            Box::new(|p: &std::path::Path| {
                Command::new(support::agentenv_bin())
                    .current_dir(&w)
                    .args(["harness", "sandbox-env"])
                    .arg(&h)
                    .arg("-o")
                    .arg(p)
                    .output()
                    .unwrap()
            }),
        ),
    ];
    for (i, (what, run)) in writers.iter().enumerate() {
        let new = w.join(format!("new{i}"));
        let out = run(&new);
        assert_eq!(out.status.code(), Some(0), "{what}: {out:?}");
        assert!(out.stderr.is_empty(), "{what}: {out:?}");
        assert_eq!(mode(&new), 0o600, "{what}");
        // An existing 0644 file keeps its mode, with one warning.
        let old = w.join(format!("old{i}"));
        fs::write(&old, "").unwrap();
        fs::set_permissions(&old, fs::Permissions::from_mode(0o644)).unwrap();
        let out = run(&old);
        assert_eq!(out.status.code(), Some(0), "{what}");
        assert_eq!(mode(&old), 0o644, "{what}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.matches("agentenv: warning:").count(),
            1,
            "{what}: {err}"
        );
        assert!(
            err.contains(&format!("{} is readable by group or others", old.display())),
            "{what}: {err}"
        );
        assert!(!err.contains("zqCANARY"), "{what}: {err}");
        if rustix::process::geteuid().is_root() {
            let share = w.join(format!("share{i}"));
            fs::create_dir(&share).unwrap();
            fs::set_permissions(&share, fs::Permissions::from_mode(0o1777)).unwrap();
            let target = w.join(format!("att{i}"));
            fs::write(&target, "").unwrap();
            let link = share.join("f");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
            let out = run(&link);
            assert_eq!(out.status.code(), Some(1), "{what}");
            assert_eq!(fs::read(&target).unwrap(), b"", "{what}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("sticky world-writable"), "{what}: {err}");
        } else {
            support::skip("foreign symlink check", "needs root to chown a link");
        }
    }
}

/// An option the command does not know, before `--` or the command word,
/// is clap's usage error (exit 2, with its suggestion) and nothing runs:
/// no store layer, no child. What follows `--` or the command word is the
/// command, verbatim.
#[test]
fn a_mistyped_option_is_a_usage_error_and_nothing_runs() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    fs::create_dir_all(w.join("home/.agents")).unwrap();
    fs::create_dir_all(w.join("proj/.agents")).unwrap();
    let ran = w.join("layer-ran");
    // A plain file bash must source: it leaves a marker when it runs.
    fs::write(
        w.join("proj/.agents/env"),
        format!("X=\"$(touch '{}')\"\n", ran.display()),
    )
    .unwrap();
    fs::create_dir_all(w.join("fs/harness")).unwrap();
    let h = w.join("fs/harness/h.yaml");
    fs::write(&h, "agent: a\nrole: r\n").unwrap();
    let child = w.join("child-ran");
    let touch = format!("touch '{}'", child.display());
    let h = h.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["exec", "--agnet", "claude", "--"], "--agent"),
        (&["exec", "--gloabl"], "--global"),
        (
            &["launch", "--no-env", "--reprot", "r.json", "--"],
            "--report",
        ),
        (&["launch", "--plugin-rot", "x"], "--plugin-root"),
        (&["harness", "run", h, "--forg", "github", "--"], "--forge"),
    ];
    for (args, similar) in cases {
        let out = support::session_cmd(&w)
            .args(args)
            .args(["sh", "-c", &touch])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("tip: a similar argument exists: '{similar}'")),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(!ran.exists(), "{args:?}: a layer ran");
        assert!(!child.exists(), "{args:?}: the command ran");
    }
    // After `--`, an option-like word is the command (127: not found) ...
    let out = support::session_cmd(&w)
        .args(["exec", "--", "--agnet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run --agnet"));
    // ... and after the command word everything is its arguments, `--` too.
    for cmd in ["exec", "launch"] {
        let out = support::session_cmd(&w)
            .args([
                cmd,
                "sh",
                "-c",
                "printf '%s|' \"$@\"",
                "x",
                "--agnet",
                "-v",
                "--",
                "y",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "--agnet|-v|--|y|",
            "{cmd}"
        );
    }
    let out = support::session_cmd(&w)
        .args([
            "harness",
            "run",
            h,
            "sh",
            "-c",
            "printf '%s|' \"$@\"",
            "x",
            "--forg",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "--forg|");
    // The marker layer does run when the options are right (so the
    // checks above can fail).
    assert!(ran.exists());
}

/// One stdout writer, one rule: a closed pipe (the reader went away) is not
/// an error — silent, the command's own status stands; any other write
/// error (`> /dev/full`) is exit 1 with one message.
#[test]
fn a_closed_stdout_is_not_an_error_a_full_disk_is() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    fs::create_dir_all(w.join("home/.agents")).unwrap();
    fs::create_dir_all(w.join("proj/.agents")).unwrap();
    fs::write(w.join("proj/.agents/env"), "A=1\n").unwrap();
    fs::create_dir_all(w.join("fs/harness")).unwrap();
    let h = w.join("fs/harness/h.yaml");
    fs::write(&h, "agent: a\nrole: r\nenv:\n  sandbox:\n    S: 'x'\n").unwrap();
    let good = w.join("good.env");
    fs::write(&good, "A=1\n").unwrap();
    let bad = w.join("bad.env");
    fs::write(&bad, "not an assignment\n").unwrap();
    let h = h.to_str().unwrap();
    let (good, bad) = (good.to_str().unwrap(), bad.to_str().unwrap());
    // (args, status when the output cannot be delivered to a closed pipe)
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["env", "--format", "json"], 0),
        (vec!["env", "--cache", "--format", "export"], 0),
        (vec!["explain"], 0),
        (vec!["harness", "resolve", h], 0),
        (vec!["harness", "sandbox-env", h], 0),
        (vec!["dotenv", "parse", good], 0),
        (vec!["dotenv", "check", bad], 1),
        (vec!["completions", "bash"], 0),
        (vec!["hook", "bash"], 0),
        (vec!["status"], 0),
        (vec!["status", "--format", "json"], 0),
        (vec!["man"], 0),
        (vec!["init", "claude", "--dry-run", "-q"], 0),
    ];
    for (args, closed_status) in &cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = support::session_cmd(&w)
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(*closed_status),
            "{args:?} to a closed pipe"
        );
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = support::session_cmd(&w)
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?} to /dev/full");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr)
                .matches("agentenv: error: cannot write to stdout: no space left on device")
                .count(),
            1,
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Every command reads the current directory through one function with one
/// message: a removed cwd is exit 1 and one `agentenv: error:` line
/// ending `cannot read the current directory: no such file or directory`
/// (the OS error in lower case, no `(os error 2)`, no Rust `NotFound`).
#[test]
fn a_removed_cwd_is_one_message_for_every_command() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    fs::create_dir_all(w.join("home/.agents")).unwrap();
    fs::create_dir_all(w.join("proj")).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["env"], ""),
        (&["explain"], ""),
        (&["exec", "--", "true"], ""),
        (&["status"], ""),
        (&["allow"], ""),
        (&["deny"], ""),
        (&["init", "claude", "--dry-run"], ""),
        (&["hook", "bash", "--load", "--pid", "1"], "hook: "),
        (&["launch", "--", "true"], "launch: "),
    ];
    for (args, prefix) in cases {
        // The shell enters a directory, removes it, then becomes agentenv.
        let session = support::session_cmd(&w);
        let mut sh = Command::new("/bin/sh");
        sh.env_clear()
            .current_dir(w.join("proj"))
            .env("XDG_STATE_HOME", w.join("state"));
        for (k, v) in session.get_envs() {
            if let Some(v) = v {
                sh.env(k, v);
            }
        }
        let out = sh
            .args([
                "-c",
                "mkdir gone && cd gone && rmdir ../gone && exec \"$@\"",
                "sh",
            ])
            .arg(session.get_program())
            .args(*args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(
            err,
            format!(
                "agentenv: error: {prefix}cannot read the current directory: no such file or directory\n"
            ),
            "{args:?}"
        );
    }
}

/// A usage failure (`hook tcsh`) and a runtime failure (`man --dir` under
/// a file) are one `agentenv: error:` line with the command's status;
/// `-qq` silences the line, never the status.
#[test]
fn command_failures_are_printed_once() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    fs::create_dir_all(w.join("home/.agents")).unwrap();
    fs::create_dir_all(w.join("proj")).unwrap();
    fs::write(w.join("file"), "").unwrap();
    let page_dir = w.join("file/man1");
    let cases: Vec<(Vec<&str>, i32, String)> = vec![
        (
            vec!["hook", "tcsh"],
            2,
            "agentenv: error: hook: unknown shell 'tcsh' (known: bash, zsh, fish)\n".into(),
        ),
        (
            vec!["man", "--dir", page_dir.to_str().unwrap()],
            1,
            format!("agentenv: error: {}: not a directory\n", page_dir.display()),
        ),
    ];
    for (args, code, want) in &cases {
        let out = support::session_cmd(&w).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(*code), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), *want, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let out = support::session_cmd(&w)
            .arg("-qq")
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(*code), "{args:?} -qq");
        assert!(out.stderr.is_empty(), "{args:?} -qq");
    }
}

/// agentenv's own `--format` enums are clap value enums: an unknown value
/// lists the accepted ones; like every bad --format it exits 1 before
/// anything runs.
#[test]
fn unknown_formats_list_the_accepted_values() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    fs::create_dir_all(w.join("proj")).unwrap();
    let out = support::session_cmd(&w)
        .args(["explain", "--format", "xml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'xml' for '--format <F>'"),
        "{err}"
    );
    assert!(err.contains("[possible values: text, json]"), "{err}");
    for args in [
        &["env", "--format", "xml"][..],
        &["dotenv", "parse", "--format", "xml", "/dev/null"],
    ] {
        let out = support::session_cmd(&w).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("auto, bash") && err.contains("yaml"),
            "{args:?}: {err}"
        );
    }
}
