//! Every command's `--help` ends with 2–4 examples, and every example that
//! can run here runs, in a sandbox HOME with a user store, a project store,
//! dotenv files and a harness file, and exits 0.
//!
//! Programs an example starts that a test machine lacks (`claude`, `make`)
//! are stubs on PATH that print their arguments: the test checks
//! agentenv's part of the line. Examples in another shell's syntax run in
//! that shell (zsh, fish); PowerShell's runs only where `pwsh` exists.

use crate::support;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::Tree;

use agentenv::internals::cli::{all_commands, split_after_help, Example};

/// Every visible command with its examples.
fn examples() -> Vec<(String, Vec<Example>)> {
    let root = agentenv::internals::cli::command();
    all_commands(&root)
        .into_iter()
        .map(|c| {
            let name = c.get_bin_name().unwrap_or(c.get_name()).to_string();
            (name, split_after_help(c).1)
        })
        .collect()
}

#[test]
fn every_command_has_two_to_four_examples() {
    let all = examples();
    assert!(all.len() >= 15, "{} commands", all.len());
    for (cmd, ex) in &all {
        assert!(
            (2..=4).contains(&ex.len()),
            "{cmd}: {} examples (want 2 to 4)",
            ex.len()
        );
        for e in ex {
            let first = e.line.lines().next().unwrap();
            assert!(
                first.contains(cmd.as_str()),
                "{cmd}: example does not run this command: {first}"
            );
            for l in e.line.lines() {
                assert!(l.len() + 2 <= 80, "{cmd}: longer than 80 columns: {l}");
            }
        }
    }
}

#[test]
fn help_ends_with_the_examples() {
    for (cmd, ex) in examples() {
        let mut args: Vec<&str> = cmd.split(' ').skip(1).collect();
        args.push("--help");
        let out = Command::new(support::agentenv_bin())
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd} --help");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.contains('\x1b'), "{cmd}: escape codes on a pipe");
        let tail = &text[text.rfind("\nExamples:\n").expect("an Examples section")..];
        let mut want = String::from("\nExamples:\n");
        for e in &ex {
            if !e.about.is_empty() {
                want.push_str(&format!("  # {}\n", e.about));
            }
            for (i, l) in e.line.lines().enumerate() {
                let pad = if i == 0 { "  " } else { "" };
                want.push_str(&format!("{pad}{l}\n"));
            }
        }
        // Continuation lines keep their own indentation.
        let norm = |s: &str| s.lines().map(str::trim).collect::<Vec<_>>().join("\n");
        assert_eq!(
            norm(tail),
            norm(&want),
            "{cmd}: --help must end with its examples"
        );
    }
}

/// The sandbox the examples run in: a home with a user store, a project
/// with a store, dotenv files, a harness and an MCP config, and stub
/// programs the examples call.
struct Sandbox {
    t: Tree,
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    stubs: PathBuf,
}

fn sandbox() -> Sandbox {
    let t = Tree::new()
        .file("home/.agents/env", "EDITOR=vi\n")
        .file("home/src/project/.agents/env", "PROJECT_MODE=review\n")
        .file("home/src/project/.env", "API_URL=http://localhost:8080\n")
        .file("home/src/project/.env.local", "LOG_LEVEL=debug\n")
        .file(
            "home/src/project/harness/review.yaml",
            r#"agent: agents/review.md
role: review
env:
  runner:
    REVIEW_MODE: strict
  sandbox:
    REVIEW_THRESHOLD: medium
overlays:
  - when: "runtime.forge == 'gitlab'"
    env:
      sandbox:
        GITLAB_MR: "true"
"#,
        )
        .file(
            "home/src/project/event.json",
            "{\"labels\": [\"urgent\"]}\n",
        )
        .file("home/src/project/server.js", "process.exit(0);\n")
        .file(
            "home/src/project/mcp/env.json",
            "{\"LOG_LEVEL\": \"info\"}\n",
        )
        .dir("home/.local/share/bash-completion/completions")
        .dir("home/.zfunc")
        .dir("home/.config/fish/completions")
        // audit's examples name Claude Code's transcripts (a named path
        // that does not exist is an error).
        .dir("home/.claude/projects");
    for stub in ["claude", "make"] {
        t.exe(&format!("stubs/{stub}"), "#!/bin/sh\necho \"stub $0 $*\"\n");
    }
    Sandbox {
        root: t.root().to_path_buf(),
        home: t.path("home"),
        project: t.path("home/src/project"),
        stubs: t.path("stubs"),
        t,
    }
}

/// How an example runs.
enum How {
    /// `SHELL -c LINE` in the project directory.
    Shell(&'static str, &'static [&'static str]),
    /// Written to `mcp/launch.sh` and run as `sh mcp/launch.sh` (it uses `$0`).
    Script,
    /// In bash on a pseudo-terminal (`tests/it/support/pty_run.py`), typing
    /// a value at each of `set`'s two prompts.
    Tty,
    /// Not here, with the reason.
    Never(&'static str),
}

fn how(line: &str) -> How {
    if line.contains("\"$0\"") {
        How::Script
    } else if line.contains("hook zsh") || line.contains("completions zsh") {
        How::Shell("zsh", &["-f", "-c"])
    } else if line.contains("hook fish") {
        How::Shell("fish", &["--no-config", "-c"])
    } else if line.contains("agentenv set ") {
        How::Tty
    } else if line.contains("Invoke-Expression") {
        How::Never("PowerShell syntax")
    } else if line.contains("agentenv import --to") {
        How::Never(
            "needs a backend (OpenBao, age recipients): refs::import_to_* run it against real ones",
        )
    } else {
        How::Shell("bash", &["--noprofile", "--norc", "-c"])
    }
}

fn run_bounded(mut cmd: Command, what: &str) -> (bool, String, String) {
    let out_path = tempfile::NamedTempFile::new().unwrap();
    let err_path = tempfile::NamedTempFile::new().unwrap();
    cmd.stdin(Stdio::null())
        .stdout(out_path.reopen().unwrap())
        .stderr(err_path.reopen().unwrap());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.success(),
        fs::read_to_string(out_path.path()).unwrap_or_default(),
        fs::read_to_string(err_path.path()).unwrap_or_default(),
    )
}

#[test]
#[cfg_attr(
    any(missing = "bash", missing = "zsh", missing = "fish", missing = "man"),
    ignore = "needs bash, zsh, fish and man"
)]
fn every_example_that_can_run_here_runs() {
    let sb = sandbox();
    let bin_dir = support::agentenv_bin().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        bin_dir.display(),
        sb.stubs.display()
    );
    let mut ran = 0;
    let mut never = Vec::new();
    // `man -l -` pages on a terminal only; here it writes to the pipe.
    let have_man = support::which("man").is_some();
    for (cmd, list) in examples() {
        for ex in list {
            let what = format!("{cmd}: {}", ex.line);
            let tty = matches!(how(&ex.line), How::Tty);
            let mut c = match how(&ex.line) {
                How::Never(why) => {
                    never.push(format!("{what} ({why})"));
                    continue;
                }
                How::Script => {
                    let script = sb.t.write(
                        "home/src/project/mcp/launch.sh",
                        format!("#!/bin/sh\n{}\n", ex.line),
                    );
                    let mut c = Command::new("sh");
                    c.arg(&script);
                    c
                }
                How::Tty => {
                    let driver = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/it/support/pty_run.py");
                    let argv = ["bash", "--noprofile", "--norc", "-c", &ex.line];
                    let steps = [
                        ["Value for ", "typed-v4lue\r"],
                        ["confirm ", "typed-v4lue\r"],
                    ];
                    let mut c = Command::new("python3");
                    c.arg(driver)
                        .arg(serde_json::to_string(&argv).unwrap())
                        .arg(serde_json::to_string(&steps).unwrap());
                    c
                }
                How::Shell(shell, args) => {
                    if support::which(shell).is_none() {
                        support::skip(shell, &what);
                        continue;
                    }
                    if ex.line.contains("man -l") && !have_man {
                        support::skip("man", &what);
                        continue;
                    }
                    let mut c = Command::new(shell);
                    c.args(args.iter()).arg(&ex.line);
                    c
                }
            };
            c.env_clear()
                .current_dir(&sb.project)
                .env("HOME", &sb.home)
                .env("PATH", &path)
                .env("LANG", "C.UTF-8")
                .env("TERM", "dumb")
                .env("MANPAGER", "cat")
                .env("PAGER", "cat")
                .env("XDG_CACHE_HOME", sb.home.join(".cache"))
                .env("XDG_STATE_HOME", sb.home.join(".local/state"))
                .env("XDG_CONFIG_HOME", sb.home.join(".config"))
                .env("XDG_DATA_HOME", sb.home.join(".local/share"))
                .env("CLAUDE_ENV_FILE", sb.root.join("claude.env"))
                .env("GITHUB_ENV", sb.root.join("github.env"));
            let (mut ok, mut out, mut err) = run_bounded(c, &what);
            if tty && ok {
                let v: serde_json::Value = serde_json::from_str(&out).unwrap();
                ok = v["status"] == 0 && v["error"].is_null();
                err = v["out"].as_str().unwrap_or_default().to_string();
                out = String::new();
            }
            eprintln!(
                "ran: {what}\n{}{}",
                out.chars().take(300).collect::<String>(),
                err
            );
            assert!(ok, "{what}: failed\nstdout:\n{out}\nstderr:\n{err}");
            assert!(!err.contains("error"), "{what}: stderr:\n{err}");
            ran += 1;
        }
    }
    // What the examples wrote is where they say.
    assert!(sb.root.join("github.env").is_file());
    assert!(sb
        .home
        .join(".local/share/man/man1/agentenv-env.1")
        .is_file());
    assert!(sb.home.join(".zfunc/_agentenv").is_file());
    // PowerShell, and the two imports that need a real backend.
    assert_eq!(never.len(), 3, "examples that never run here: {never:?}");
    assert!(ran >= 40, "{ran} examples ran");
}
