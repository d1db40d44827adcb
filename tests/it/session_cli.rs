//! `agentenv env` and `agentenv exec` through the binary: flags, exit codes,
//! timeouts, the output limit, file kinds, and exec's child environment.

use crate::support;

use std::process::Command;
use std::time::{Duration, Instant};
use support::Tree;

/// A user `env.py` that leaves a mark when it runs.
fn marking_env_py() -> Tree {
    let t = Tree::session();
    let marker = t.arg("ran");
    t.file(
        "home/.agents/env.py",
        format!("open({marker:?}, 'w').write('x')\nprint('{{}}')\n"),
    )
}

#[test]
fn bad_format_exits_1_before_any_layer_runs() {
    let t = marking_env_py();
    t.agentenv(["env", "--format", "JSON"])
        .status(1)
        .stdout("")
        .stderr_has("agentenv: error: --format must be one of auto, bash, bat, batch, cmd, dotenv, env, export, fish, ini, json, posix, powershell, ps, pwsh, sh, yaml (got 'JSON')")
        .run();
    assert!(
        !t.path("ran").exists(),
        "a layer ran before the format was checked"
    );
}

#[test]
fn a_good_format_runs_the_layer() {
    let t = marking_env_py();
    t.agentenv(["env", "--format", "json"]).run();
    assert!(t.path("ran").exists());
}

#[test]
fn usage_errors_exit_2() {
    let t = Tree::session();
    for args in [
        &["env", "--nope"][..],
        &["env", "--format"],
        &["env", "--timeout", "x"],
        &["env", "--timeout", "0"],
        &["exec"],
    ] {
        t.agentenv(args).status(2).run();
    }
}

/// Layers that never finish: a python one with a grandchild, a plain
/// file with a background job; and one that is fast.
fn slow_layers() -> Tree {
    Tree::session()
        .file(
            "home/.agents/overlays/slow/env.py",
            r#"import os, time, subprocess
subprocess.Popen(['sleep', '60'])
print('{"SLOW": "1"}', flush=True)
time.sleep(60)
"#,
        )
        .file(
            "home/.agents/overlays/slowsh/env",
            "SLOWSH=1\nsleep 60 &\nsleep 60\n",
        )
        .file("home/.agents/env", "FAST=1\n")
}

#[test]
fn timeout_kills_the_group_and_the_rest_applies() {
    let t = slow_layers();
    let start = Instant::now();
    t.agentenv(["env", "--format", "json", "--diff", "--timeout", "0.5"])
        .stdout_has(r#""FAST": "1""#)
        .stdout_lacks(r#""SLOW""#)
        .stdout_lacks(r#""SLOWSH""#)
        .stderr_has("env.py timed out after 0.5 s: ")
        .stderr_has("overlays/slow/env.py")
        .stderr_has("env file timed out after 0.5 s: ")
        .run();
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn agents_env_timeout_is_the_default_timeout() {
    let t = slow_layers();
    let start = Instant::now();
    t.agentenv(["env", "--format", "json", "--diff"])
        .env("AGENTS_ENV_TIMEOUT", "0.5")
        .any_status()
        .stderr_has("timed out after 0.5 s")
        .run();
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn output_over_16_mib_fails_the_layer() {
    let t = Tree::session()
        .file(
            "home/.agents/env.py",
            r#"import sys
sys.stdout.write('{"A": "' + 'x' * (16 * 1024 * 1024) + '"}')
"#,
        )
        .file("home/.agents/env", "OK=1\n");
    t.agentenv(["env", "--format", "json", "--diff"])
        .stderr_has("env.py output over 16 MiB")
        .stdout_has(r#""OK": "1""#)
        .stdout_lacks(r#""A""#)
        .run();
}

#[test]
fn only_regular_files_are_read() {
    let t = Tree::session()
        .dir("home/.agents")
        .dir("proj/.agents/env")
        .file("proj/.agents/local.env", "LOCAL=1\n");
    for fifo in ["home/.agents/env", "home/.agents/pre.env.py"] {
        assert!(Command::new("mkfifo")
            .arg(t.path(fifo))
            .status()
            .unwrap()
            .success());
    }
    t.agentenv(["env", "--format", "json", "--diff"])
        .any_status()
        .deadline(Duration::from_secs(20))
        .stdout_has(r#""LOCAL": "1""#)
        .run();
}

#[test]
fn exec_runs_in_the_assembled_env() {
    let t = Tree::session().file("home/.agents/env", "unset GONE\nexport FROM_FILE='a b'\n");
    t.agentenv([
        "exec",
        "--",
        "sh",
        "-c",
        r#"printf '%s|%s|%s|%s' "$FROM_FILE" "${GONE-unset}" "$DOTAGENTS_KEEP" "$AGENTS_HOME"; exit 7"#,
    ])
    .env("GONE", "g")
    .env("DOTAGENTS_KEEP", "kept")
    .status(7)
    .stdout("a b|unset|kept|$W/home/.agents")
    .run();
}

#[test]
fn exec_looks_the_command_up_on_the_assembled_path() {
    let t = Tree::session();
    t.exe("home/.agents/bin/hello", "#!/bin/sh\necho from-store-bin\n");
    t.agentenv(["exec", "--", "hello"])
        .any_status()
        .stdout("from-store-bin\n")
        .run();
}

const SHOW_IDENTITY: &str = r#"printf '%s|%s|%s' "$AGENT" "$AGENTS_HARNESS" "$AGENTS_VENDOR""#;

#[test]
fn exec_agent_stamps_identity_unconditionally() {
    Tree::session()
        .agentenv(["exec", "--agent", "codex", "--", "sh", "-c", SHOW_IDENTITY])
        .env("CLAUDECODE", "1")
        .env("AGENT", "claude-code")
        .env("AGENTS_HARNESS", "claude-code")
        .any_status()
        .stdout("codex|codex|openai")
        .run();
}

#[test]
fn exec_without_agent_keeps_the_inherited_identity() {
    Tree::session()
        .agentenv(["exec", "--", "sh", "-c", SHOW_IDENTITY])
        .env("CLAUDECODE", "1")
        .env("AGENT", "mine")
        .any_status()
        .stdout("mine|claude-code|anthropic")
        .run();
}

#[test]
fn exec_agent_accepts_a_harness_id() {
    Tree::session()
        .agentenv([
            "exec",
            "--agent",
            "gemini-cli",
            "--",
            "sh",
            "-c",
            SHOW_IDENTITY,
        ])
        .any_status()
        .stdout("gemini-cli|gemini-cli|google")
        .run();
}

#[test]
fn exec_unknown_agent_is_a_usage_error() {
    Tree::session()
        .agentenv(["exec", "--agent", "nope", "--", "true"])
        .status(2)
        .stderr_has("unknown agent")
        .run();
}

#[test]
fn exec_not_found_127_not_executable_126() {
    let t = Tree::session().file("proj/notexec", "#!/bin/sh\n");
    t.agentenv(["exec", "--", "no-such-command-xyz"])
        .status(127)
        .stderr_has("command not found")
        .run();
    t.agentenv(["exec", "--", "./notexec"]).status(126).run();
}

#[test]
fn global_flag_and_agents_dir() {
    Tree::session()
        .file("proj/.agents/env", "P=1\n")
        .file("alt/env", "ALT=1\n")
        .agentenv([
            "env",
            "-g",
            "--agents-dir",
            "../alt",
            "--format",
            "json",
            "--diff",
        ])
        .any_status()
        .stdout_has(r#""ALT": "1""#)
        .stdout_lacks(r#""P""#)
        .stdout_has(r#""AGENTS_HOME": "$W/alt""#)
        .run();
}

/// No Python for an `env.py` layer is said as such and names
/// AGENTS_PYTHON (not "FileNotFoundError", as if the file were missing).
#[test]
fn no_python_for_env_py_says_so_and_names_agents_python() {
    let t = Tree::session().file("home/.agents/env.py", "print('{}')\n");
    t.agentenv(["env", "--format", "json"])
        .env_remove("AGENTS_PYTHON")
        .env("PATH", t.path("empty-bin"))
        .stderr_has("agentenv: warning: env.py could not run: $W/home/.agents/env.py: no Python found (no python3 or python on PATH); set AGENTS_PYTHON to an interpreter")
        .stderr_lacks("FileNotFoundError")
        .run();
}

/// An interpreter that cannot start is named with a lower-case OS reason.
#[test]
fn a_pinned_python_that_cannot_start_is_named() {
    let t = Tree::session()
        .file("home/.agents/env.py", "print('{}')\n")
        .file("fake-python", "not a program");
    t.agentenv(["env", "--format", "json"])
        .env("AGENTS_PYTHON", t.path("fake-python"))
        .any_status()
        .stderr_has("the Python interpreter $W/fake-python could not be started (permission denied); set AGENTS_PYTHON to a working one")
        .stderr_lacks("PermissionDenied")
        .stderr_lacks("Permission denied")
        .run();
}

/// A user store with an overlay, and a project store whose env fails.
fn verbose_tree() -> Tree {
    Tree::session()
        .file("home/.agents/env", "A=v1SECRET\n")
        .file("home/.agents/overlays/tool/env", "O=v2SECRET\n")
        .file("proj/.agents/env", "exit 3\n")
}

const SUBCOMMANDS: [&[&str]; 3] = [
    &["env", "--format", "json"],
    &["exec", "true"],
    &["explain"],
];

/// Default verbosity: none of what `-v` says.
#[test]
fn default_verbosity_says_no_info() {
    let t = verbose_tree();
    for sub in SUBCOMMANDS {
        t.agentenv(sub).any_status().stderr_lacks("info").run();
    }
}

/// `-v`: the project root, each store (or why not), each overlay, each
/// layer that ran (kind, level, path, ok/failed, ms); names only.
#[test]
fn verbose_says_what_happened_names_only() {
    let t = verbose_tree();
    for sub in SUBCOMMANDS {
        t.agentenv(["-v"])
            .args(sub)
            .any_status()
            .stderr_lacks("SECRET")
            .stderr_has("agentenv: info: the project root is $W/proj (the current directory)")
            .stderr_has("agentenv: info: store user: $W/home/.agents")
            .stderr_has("agentenv: info: store project: $W/proj/.agents")
            .stderr_has("agentenv: info: overlay tool: $W/home/.agents/overlays/tool")
            .stderr_has("agentenv: info: layer plain file (user) $W/home/.agents/env: ok, ")
            .stderr_has("agentenv: info: layer plain file (project) $W/proj/.agents/env: failed (")
            .stderr_has(" ms\n")
            .stderr_lacks("debug")
            .run();
    }
}

/// `-vv` adds the candidates that do not exist and how each plain file ran.
#[test]
fn very_verbose_adds_candidates_and_how_files_ran() {
    let t = verbose_tree();
    for sub in SUBCOMMANDS {
        t.agentenv(["-vv"])
            .args(sub)
            .any_status()
            .stderr_has("agentenv: debug: candidate $W/home/.agents/env.py (user): does not exist")
            .stderr_has("agentenv: debug: $W/home/.agents/env: evaluated natively (no bash)")
            .stderr_has("agentenv: debug: $W/proj/.agents/env: sourced with bash")
            .run();
    }
}

/// `-v` says the cache missed and why, then that it hit (running no layer).
#[test]
fn verbose_says_cache_miss_and_hit() {
    let t = verbose_tree();
    t.agentenv(["-v", "env", "--cache", "--format", "json"])
        .any_status()
        .stderr_has("agentenv: info: cache miss: no entry for this key")
        .run();
    t.agentenv(["-v", "env", "--cache", "--format", "json"])
        .any_status()
        .stderr_has("agentenv: info: cache hit: ")
        .stderr_lacks("info: layer ")
        .run();
}

/// The ~/.bashrc trap: `eval "$(agentenv env --diff)"` in ~/.bashrc
/// exports AGENTS_PROJECT_ROOT=$HOME, after which no project store loads.
/// The behaviour is the reference's (kept); explain and -v say why.
mod project_root_from_the_environment {
    use super::support::{Run, Tree};

    const NOTE: &str = "the project root is $W/home, from $AGENTS_PROJECT_ROOT; the current directory's $W/proj/.agents was therefore not walked";

    fn trapped(args: &[&str]) -> (Tree, Run) {
        let t = Tree::session().file("proj/.agents/env", "P=1\n");
        let run = t
            .agentenv(args)
            .env("AGENTS_PROJECT_ROOT", t.path("home"))
            .any_status();
        (t, run)
    }

    #[test]
    fn explain_says_which_variable_decided() {
        let (_t, run) = trapped(&["explain"]);
        run.stdout_has(format!("note: {NOTE}"))
            .stdout_has("agentenv hook")
            // The project store really was not walked.
            .stdout_lacks("\nP ")
            .run();
    }

    #[test]
    fn explain_json_notes_it() {
        let (_t, run) = trapped(&["explain", "--format", "json"]);
        let j = run.run().json_w();
        assert!(j["notes"][0].as_str().unwrap().starts_with(NOTE), "{j}");
    }

    #[test]
    fn verbose_env_says_which_variable_decided() {
        let (_t, run) = trapped(&["-v", "env", "--diff"]);
        run.stderr_has(format!("agentenv: info: {NOTE}")).run();
    }

    #[test]
    fn env_stdout_never_carries_the_note() {
        let (_t, run) = trapped(&["env", "--diff"]);
        run.stderr("").run();
    }

    #[test]
    fn without_the_variable_no_note() {
        Tree::session()
            .file("proj/.agents/env", "P=1\n")
            .agentenv(["explain"])
            .any_status()
            .stdout_lacks("note:")
            .run();
    }
}

/// Warnings and `-v` lines come in the order things happened: what
/// resolving the scope ignored, the scope's lines, then per env file its
/// warnings before its layer line. `-q` keeps none of it.
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn warnings_and_layer_lines_keep_their_order() {
    let t = Tree::session()
        .file("home/.agents/pre.env", "false\n")
        .file("home/.agents/env.py", "import sys\nsys.exit(3)\n")
        .file("proj/.agents/env", "A=1\n");
    let ran = t
        .agentenv(["-v", "env", "--format", "json"])
        .env("AGENTS_ENV_TIMEOUT", "soon")
        .run();
    let lines: Vec<String> = ran
        .stderr_w()
        .lines()
        .map(|l| match l.rsplit_once(", ") {
            Some((head, tail)) if tail.ends_with(" ms") => format!("{head}, N ms"),
            _ => l.to_string(),
        })
        .collect();
    assert_eq!(
        lines,
        [
            "agentenv: warning: ignoring $AGENTS_ENV_TIMEOUT: not a positive number of seconds; using 30 s",
            "agentenv: info: the project root is $W/proj (the current directory)",
            "agentenv: info: store system: $AGENTS_SYSTEM_ROOT not walked (not a directory, or refused above)",
            "agentenv: info: store user: $W/home/.agents",
            "agentenv: info: store project: $W/proj/.agents",
            "agentenv: warning: env file source failed: $W/home/.agents/pre.env; the whole file was dropped (a syntax error, an exit or a failing last command; bash -n shows a syntax error's line)",
            "agentenv: info: layer plain file (user) $W/home/.agents/pre.env: failed (source failed), N ms",
            "agentenv: warning: env.py failed (exit 3): $W/home/.agents/env.py",
            "agentenv: info: layer env.py (user) $W/home/.agents/env.py: failed (exit 3), N ms",
            "agentenv: info: layer plain file (project) $W/proj/.agents/env: ok, N ms",
        ]
    );
    t.agentenv(["-q", "env", "--format", "json"])
        .env("AGENTS_ENV_TIMEOUT", "soon")
        .stderr("")
        .run();
}
