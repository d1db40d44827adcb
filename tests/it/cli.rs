//! The command line as a whole: help, version, completions, verbosity and
//! usage errors.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use support::{agentenv, Run, Tree};

#[test]
fn help_lists_only_commands_that_run() {
    let help = agentenv(["--help"]).run().stdout;
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
            "redact",
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
            "audit",
            "set",
            "import",
            "mcp",
            "man"
        ]
    );
    for c in commands {
        agentenv([c, "--help"])
            .stderr_lacks("not implemented")
            .run();
    }
}

#[test]
fn version_prints_the_crate_version() {
    agentenv(["--version"])
        .stdout(format!("agentenv {}\n", env!("CARGO_PKG_VERSION")))
        .run();
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["no-such-command"][..],
        &["env", "--no-such-flag"],
        &["env", "--format"],
        &["completions", "tcsh"],
        &[],
    ] {
        agentenv(args).status(2).run();
    }
}

/// The completion script for `shell`: it names the binary and completes
/// the subcommands.
fn completion(shell: &str) -> String {
    let mut run = agentenv(["completions", shell]).stdout_has("agentenv");
    for sub in ["env", "launch", "harness", "sandbox-env"] {
        run = run.stdout_has(sub);
    }
    run.run().stdout
}

/// `shell ARGS FILE` accepts the completion script for `shell`.
fn parses_in(shell: &str, args: &[&str]) {
    let t = Tree::new().file("completion", completion(shell));
    let bin = support::tool(shell).expect(shell);
    t.command(bin).args(args).arg(t.path("completion")).run();
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn the_bash_completion_parses_in_bash() {
    parses_in("bash", &["-n"]);
}

#[test]
#[cfg_attr(missing = "zsh", ignore = "needs zsh")]
fn the_zsh_completion_parses_in_zsh() {
    parses_in("zsh", &["-n"]);
}

#[test]
#[cfg_attr(missing = "fish", ignore = "needs fish")]
fn the_fish_completion_parses_in_fish() {
    parses_in("fish", &["--no-execute"]);
}

#[test]
fn the_powershell_completion_completes_the_commands() {
    completion("powershell");
}

/// A store whose env.py fails.
fn failing_store() -> Tree {
    Tree::session().file("home/.agents/env.py", "import sys\nsys.exit(3)\n")
}

const ENV_JSON: [&str; 4] = ["env", "--format", "json", "--diff"];

#[test]
fn a_failing_layer_warns_once_by_default() {
    failing_store()
        .agentenv(ENV_JSON)
        .stderr_has("agentenv: warning: env.py failed (exit 3)")
        .run();
}

#[test]
fn quiet_silences_warnings_and_changes_only_stderr() {
    let t = failing_store();
    let normal = t.agentenv(ENV_JSON).run();
    for q in ["-q", "-qq"] {
        t.agentenv([q])
            .args(ENV_JSON)
            .stderr("")
            .stdout(normal.stdout.clone())
            .run();
    }
}

#[test]
fn quiet_still_shows_errors() {
    let err = failing_store()
        .agentenv(["-q", "env", "--format", "nope"])
        .status(1)
        .run()
        .stderr;
    assert!(
        err.starts_with("agentenv: error: --format must be one of"),
        "{err}"
    );
}

#[test]
fn very_quiet_shows_nothing() {
    failing_store()
        .agentenv(["-qq", "env", "--format", "nope"])
        .status(1)
        .stderr("")
        .run();
}

#[test]
fn verbosity_flags_work_after_the_subcommand() {
    failing_store()
        .agentenv(ENV_JSON)
        .arg("-qq")
        .stderr("")
        .run();
}

/// Files that can hold values (`launch --report`, `harness sandbox-env
/// -o`; `--into` in tests/it/into.rs): a tree with a harness file holding a
/// canary, and a way to have each command write a file.
mod value_files_are_private {
    use super::*;

    fn tree() -> Tree {
        Tree::new().file(
            "fs/harness/h.yaml",
            "agent: a\nrole: r\nenv:\n  sandbox:\n    SB: 'zqCANARYsb'\n",
        )
    }

    /// `agentenv launch --report FILE` or `harness sandbox-env -o FILE`.
    fn write(t: &Tree, writer: &str, file: &Path) -> Run {
        let run = t.command(support::agentenv_bin());
        match writer {
            "launch" => run
                .args(["launch", "--no-env", "--report"])
                .arg(file)
                .args(["--", "true"]),
            _ => run
                .args(["harness", "sandbox-env"])
                .arg(t.path("fs/harness/h.yaml"))
                .arg("-o")
                .arg(file),
        }
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    fn a_new_file_is_0600(writer: &str) {
        let t = tree();
        write(&t, writer, &t.path("new")).stderr("").run();
        assert_eq!(mode(&t.path("new")), 0o600);
    }

    /// An existing 0644 file keeps its mode, with one warning naming it.
    fn an_existing_readable_file_keeps_its_mode(writer: &str) {
        let t = tree().file("old", "");
        fs::set_permissions(t.path("old"), fs::Permissions::from_mode(0o644)).unwrap();
        let err = write(&t, writer, &t.path("old"))
            .stderr_has("$W/old is readable by group or others")
            .stderr_lacks("zqCANARY")
            .run()
            .stderr;
        assert_eq!(err.matches("agentenv: warning:").count(), 1, "{err}");
        assert_eq!(mode(&t.path("old")), 0o644);
    }

    /// Another user's symlink in a sticky world-writable directory is not
    /// followed.
    fn a_foreign_symlink_in_a_sticky_dir_is_refused(writer: &str) {
        let t = tree().dir("share").file("att", "");
        fs::set_permissions(t.path("share"), fs::Permissions::from_mode(0o1777)).unwrap();
        let link = t.path("share/f");
        std::os::unix::fs::symlink(t.path("att"), &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        write(&t, writer, &link)
            .status(1)
            .stderr_has("sticky world-writable")
            .run();
        assert_eq!(fs::read(t.path("att")).unwrap(), b"");
    }

    #[test]
    fn launch_report_new_is_0600() {
        a_new_file_is_0600("launch");
    }

    #[test]
    fn sandbox_env_output_new_is_0600() {
        a_new_file_is_0600("sandbox-env");
    }

    #[test]
    fn launch_report_existing_keeps_its_mode_with_one_warning() {
        an_existing_readable_file_keeps_its_mode("launch");
    }

    #[test]
    fn sandbox_env_output_existing_keeps_its_mode_with_one_warning() {
        an_existing_readable_file_keeps_its_mode("sandbox-env");
    }

    #[test]
    #[cfg_attr(missing = "root", ignore = "needs root")]
    fn launch_report_refuses_a_foreign_symlink_in_a_sticky_dir() {
        if !rustix::process::geteuid().is_root() {
            support::skip("foreign symlink check", "needs root to chown a link");
            return;
        }
        a_foreign_symlink_in_a_sticky_dir_is_refused("launch");
    }

    #[test]
    #[cfg_attr(missing = "root", ignore = "needs root")]
    fn sandbox_env_output_refuses_a_foreign_symlink_in_a_sticky_dir() {
        if !rustix::process::geteuid().is_root() {
            support::skip("foreign symlink check", "needs root to chown a link");
            return;
        }
        a_foreign_symlink_in_a_sticky_dir_is_refused("sandbox-env");
    }
}

/// An option the command does not know, before `--` or the command word,
/// is clap's usage error (exit 2, with its suggestion) and nothing runs:
/// no store layer, no child. What follows `--` or the command word is the
/// command, verbatim.
mod a_mistyped_option {
    use super::*;

    /// A plain file bash must source leaves a marker when it runs; a
    /// harness file.
    fn tree() -> Tree {
        let t = Tree::session().file("fs/harness/h.yaml", "agent: a\nrole: r\n");
        let marker = t.arg("layer-ran");
        t.file("proj/.agents/env", format!("X=\"$(touch '{marker}')\"\n"))
    }

    #[test]
    fn is_a_usage_error_and_nothing_runs() {
        let t = tree();
        let h = t.arg("fs/harness/h.yaml");
        let touch = format!("touch '{}'", t.arg("child-ran"));
        let cases: [(&[&str], &str); 5] = [
            (&["exec", "--agnet", "claude", "--"], "--agent"),
            (&["exec", "--gloabl"], "--global"),
            (
                &["launch", "--no-env", "--reprot", "r.json", "--"],
                "--report",
            ),
            (&["launch", "--plugin-rot", "x"], "--plugin-root"),
            (&["harness", "run", &h, "--forg", "github", "--"], "--forge"),
        ];
        for (args, similar) in cases {
            t.agentenv(args)
                .args(["sh", "-c", &touch])
                .status(2)
                .stderr_has(format!("tip: a similar argument exists: '{similar}'"))
                .stdout("")
                .run();
            assert!(!t.path("layer-ran").exists(), "{args:?}: a layer ran");
            assert!(!t.path("child-ran").exists(), "{args:?}: the command ran");
        }
        // The marker layer does run when the options are right (so the
        // checks above can fail).
        t.agentenv(["exec", "true"]).run();
        assert!(t.path("layer-ran").exists());
    }

    #[test]
    fn after_dashdash_is_the_command() {
        // An option-like word is the command (127: not found).
        tree()
            .agentenv(["exec", "--", "--agnet"])
            .status(127)
            .stderr_has("cannot run --agnet")
            .run();
    }

    #[test]
    fn after_the_command_word_everything_is_its_arguments() {
        let t = tree();
        for cmd in ["exec", "launch"] {
            t.agentenv([
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
            .stdout("--agnet|-v|--|y|")
            .run();
        }
        let h = t.arg("fs/harness/h.yaml");
        t.agentenv([
            "harness",
            "run",
            &h,
            "sh",
            "-c",
            "printf '%s|' \"$@\"",
            "x",
            "--forg",
        ])
        .stdout("--forg|")
        .run();
    }
}

/// One stdout writer, one rule: a closed pipe (the reader went away) is not
/// an error — silent, the command's own status stands; any other write
/// error (`> /dev/full`) is exit 1 with one message.
mod stdout_errors {
    use super::*;

    fn tree() -> Tree {
        Tree::session()
            .file("proj/.agents/env", "A=1\n")
            .file(
                "fs/harness/h.yaml",
                "agent: a\nrole: r\nenv:\n  sandbox:\n    S: 'x'\n",
            )
            .file("good.env", "A=1\n")
            .file("bad.env", "not an assignment\n")
    }

    /// (args, status when the output cannot be delivered to a closed pipe)
    fn cases(t: &Tree) -> Vec<(Vec<String>, i32)> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let h = t.arg("fs/harness/h.yaml");
        vec![
            (s(&["env", "--format", "json"]), 0),
            (s(&["env", "--cache", "--format", "export"]), 0),
            (s(&["explain"]), 0),
            (s(&["harness", "resolve", &h]), 0),
            (s(&["harness", "sandbox-env", &h]), 0),
            (s(&["dotenv", "parse", &t.arg("good.env")]), 0),
            (s(&["dotenv", "check", &t.arg("bad.env")]), 1),
            (s(&["completions", "bash"]), 0),
            (s(&["hook", "bash"]), 0),
            (s(&["status"]), 0),
            (s(&["status", "--format", "json"]), 0),
            (s(&["man"]), 0),
            (s(&["init", "claude", "--dry-run", "-q"]), 0),
        ]
    }

    /// Run with stdout sent to `out` (the kit pipes it; this test must not).
    fn run_to(run: Run, out: std::process::Stdio) -> (Option<i32>, String) {
        let o = run
            .into_command()
            .stdout(out)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    #[test]
    fn a_closed_stdout_is_not_an_error() {
        let t = tree();
        for (args, closed_status) in cases(&t) {
            let (reader, writer) = std::io::pipe().unwrap();
            drop(reader);
            let (code, err) = run_to(t.agentenv(&args), writer.into());
            assert_eq!(code, Some(closed_status), "{args:?} to a closed pipe");
            assert!(err.is_empty(), "{args:?}: {err}");
        }
    }

    #[test]
    fn a_full_disk_is_exit_1_with_one_message() {
        let t = tree();
        for (args, _) in cases(&t) {
            let full = fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let (code, err) = run_to(t.agentenv(&args), full.into());
            assert_eq!(code, Some(1), "{args:?} to /dev/full");
            assert_eq!(
                err.matches("agentenv: error: cannot write to stdout: no space left on device")
                    .count(),
                1,
                "{args:?}: {err}"
            );
        }
    }
}

/// Every command reads the current directory through one function with one
/// message: a removed cwd is exit 1 and one `agentenv: error:` line
/// ending `cannot read the current directory: no such file or directory`
/// (the OS error in lower case, no `(os error 2)`, no Rust `NotFound`).
#[test]
fn a_removed_cwd_is_one_message_for_every_command() {
    let t = Tree::session().dir("home/.agents");
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
        let session = support::session_cmd(t.root());
        t.command("/bin/sh")
            .with(|sh| {
                sh.env_clear();
                for (k, v) in session.get_envs() {
                    if let Some(v) = v {
                        sh.env(k, v);
                    }
                }
            })
            .env("XDG_STATE_HOME", t.path("state"))
            .cwd("proj")
            .args([
                "-c",
                "mkdir gone && cd gone && rmdir ../gone && exec \"$@\"",
                "sh",
            ])
            .arg(session.get_program())
            .args(*args)
            .status(1)
            .stderr(format!(
                "agentenv: error: {prefix}cannot read the current directory: no such file or directory\n"
            ))
            .run();
    }
}

/// A usage failure (`hook tcsh`) and a runtime failure (`man --dir` under
/// a file) are one `agentenv: error:` line with the command's status;
/// `-qq` silences the line, never the status.
#[test]
fn command_failures_are_printed_once() {
    let t = Tree::session().dir("home/.agents").file("file", "");
    let page_dir = t.arg("file/man1");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["hook", "tcsh"],
            2,
            "agentenv: error: hook: unknown shell 'tcsh' (known: bash, zsh, fish)\n",
        ),
        (
            vec!["man", "--dir", &page_dir],
            1,
            "agentenv: error: $W/file/man1: not a directory\n",
        ),
    ];
    for (args, code, want) in &cases {
        t.agentenv(args)
            .status(*code)
            .stderr(*want)
            .stdout("")
            .run();
        t.agentenv(["-qq"])
            .args(args)
            .status(*code)
            .stderr("")
            .run();
    }
}

/// agentenv's own `--format` enums are clap value enums: an unknown value
/// lists the accepted ones; like every bad --format it exits 1 before
/// anything runs.
#[test]
fn unknown_formats_list_the_accepted_values() {
    let t = Tree::session();
    t.agentenv(["explain", "--format", "xml"])
        .status(1)
        .stderr_has("invalid value 'xml' for '--format <F>'")
        .stderr_has("[possible values: text, json]")
        .run();
    for args in [
        &["env", "--format", "xml"][..],
        &["dotenv", "parse", "--format", "xml", "/dev/null"],
    ] {
        t.agentenv(args)
            .status(1)
            .stderr_has("auto, bash")
            .stderr_has("yaml")
            .run();
    }
}
