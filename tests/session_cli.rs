//! `agentenv env` and `agentenv exec` through the binary: flags, exit codes,
//! timeouts, the output limit, file kinds, and exec's child environment.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn write(w: &Path, rel: &str, body: &str) {
    let p = w.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

fn scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("proj")).unwrap();
    std::fs::create_dir_all(d.path().join("home")).unwrap();
    d
}

fn cmd(w: &Path, args: &[&str]) -> Command {
    let mut c = support::session_cmd(w);
    c.args(args);
    c
}

fn run(w: &Path, args: &[&str]) -> Output {
    cmd(w, args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn bad_format_exits_1_before_any_layer_runs() {
    let d = scratch();
    let w = d.path();
    let marker = w.join("ran");
    write(
        w,
        "home/.agents/env.py",
        &format!(
            "open({:?}, 'w').write('x')\nprint('{{}}')\n",
            marker.to_str().unwrap()
        ),
    );
    let o = run(w, &["env", "--format", "JSON"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("agentenv: error: --format must be one of auto, bash, bat, batch, cmd, dotenv, env, export, fish, ini, json, posix, powershell, ps, pwsh, sh, yaml (got 'JSON')"),
        "{}",
        stderr(&o)
    );
    assert!(
        !marker.exists(),
        "a layer ran before the format was checked"
    );
    // The same tree with a good format runs the layer.
    let o = run(w, &["env", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(marker.exists());
}

#[test]
fn usage_errors_exit_2() {
    let d = scratch();
    let w = d.path();
    for args in [
        &["env", "--nope"][..],
        &["env", "--format"][..],
        &["env", "--timeout", "x"][..],
        &["env", "--timeout", "0"][..],
        &["exec"][..],
    ] {
        assert_eq!(run(w, args).status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn timeout_kills_the_group_and_the_rest_applies() {
    let d = scratch();
    let w = d.path();
    write(
        w,
        "home/.agents/overlays/slow/env.py",
        "import os, time, subprocess\nsubprocess.Popen(['sleep', '60'])\nprint('{\"SLOW\": \"1\"}', flush=True)\ntime.sleep(60)\n",
    );
    write(
        w,
        "home/.agents/overlays/slowsh/env",
        "SLOWSH=1\nsleep 60 &\nsleep 60\n",
    );
    write(w, "home/.agents/env", "FAST=1\n");
    let t = Instant::now();
    let o = run(
        w,
        &["env", "--format", "json", "--diff", "--timeout", "0.5"],
    );
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains("\"FAST\": \"1\""), "{out}");
    assert!(
        !out.contains("\"SLOW\"") && !out.contains("\"SLOWSH\""),
        "{out}"
    );
    let err = stderr(&o);
    assert!(err.contains("env.py timed out after 0.5 s: "), "{err}");
    assert!(err.contains("overlays/slow/env.py"), "{err}");
    assert!(err.contains("env file timed out after 0.5 s: "), "{err}");
    // AGENTS_ENV_TIMEOUT is the default when --timeout is absent.
    let t = Instant::now();
    let o = cmd(w, &["env", "--format", "json", "--diff"])
        .env("AGENTS_ENV_TIMEOUT", "0.5")
        .output()
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(20));
    assert!(
        stderr(&o).contains("timed out after 0.5 s"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn output_over_16_mib_fails_the_layer() {
    let d = scratch();
    let w = d.path();
    write(
        w,
        "home/.agents/env.py",
        "import sys\nsys.stdout.write('{\"A\": \"' + 'x' * (16 * 1024 * 1024) + '\"}')\n",
    );
    write(w, "home/.agents/env", "OK=1\n");
    let o = run(w, &["env", "--format", "json", "--diff"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("env.py output over 16 MiB"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("\"OK\": \"1\""));
    assert!(!stdout(&o).contains("\"A\""));
}

#[test]
fn only_regular_files_are_read() {
    let d = scratch();
    let w = d.path();
    std::fs::create_dir_all(w.join("home/.agents")).unwrap();
    let fifo = w.join("home/.agents/env");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let fifo_py = w.join("home/.agents/pre.env.py");
    assert!(Command::new("mkfifo")
        .arg(&fifo_py)
        .status()
        .unwrap()
        .success());
    std::fs::create_dir_all(w.join("proj/.agents/env")).unwrap();
    write(w, "proj/.agents/local.env", "LOCAL=1\n");
    let mut child = cmd(w, &["env", "--format", "json", "--diff"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!("agentenv blocked on a FIFO");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert!(stdout(&o).contains("\"LOCAL\": \"1\""), "{}", stdout(&o));
}

#[test]
fn exec_runs_in_the_assembled_env() {
    let d = scratch();
    let w = d.path();
    write(
        w,
        "home/.agents/env",
        "unset GONE\nexport FROM_FILE='a b'\n",
    );
    let o = cmd(
        w,
        &["exec", "--", "sh", "-c", "printf '%s|%s|%s|%s' \"$FROM_FILE\" \"${GONE-unset}\" \"$DOTAGENTS_KEEP\" \"$AGENTS_HOME\"; exit 7"],
    )
    .env("GONE", "g")
    .env("DOTAGENTS_KEEP", "kept")
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    let home = w.join("home/.agents");
    assert_eq!(stdout(&o), format!("a b|unset|kept|{}", home.display()));
    // The command is looked up on the assembled PATH: a store bin wins.
    write(
        w,
        "home/.agents/bin/hello",
        "#!/bin/sh\necho from-store-bin\n",
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        w.join("home/.agents/bin/hello"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let o = run(w, &["exec", "--", "hello"]);
    assert_eq!(stdout(&o), "from-store-bin\n");
}

#[test]
fn exec_agent_stamps_identity_unconditionally() {
    let d = scratch();
    let w = d.path();
    let show = "printf '%s|%s|%s' \"$AGENT\" \"$AGENTS_HARNESS\" \"$AGENTS_VENDOR\"";
    let o = cmd(w, &["exec", "--agent", "codex", "--", "sh", "-c", show])
        .env("CLAUDECODE", "1")
        .env("AGENT", "claude-code")
        .env("AGENTS_HARNESS", "claude-code")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "codex|codex|openai");
    // Without --agent the inherited identity holds.
    let o = cmd(w, &["exec", "--", "sh", "-c", show])
        .env("CLAUDECODE", "1")
        .env("AGENT", "mine")
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "mine|claude-code|anthropic");
    // A harness id is accepted as the name.
    let o = run(
        w,
        &["exec", "--agent", "gemini-cli", "--", "sh", "-c", show],
    );
    assert_eq!(stdout(&o), "gemini-cli|gemini-cli|google");
    let o = run(w, &["exec", "--agent", "nope", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown agent"), "{}", stderr(&o));
}

#[test]
fn exec_not_found_127_not_executable_126() {
    let d = scratch();
    let w = d.path();
    let o = run(w, &["exec", "--", "no-such-command-xyz"]);
    assert_eq!(o.status.code(), Some(127));
    assert!(stderr(&o).contains("command not found"), "{}", stderr(&o));
    write(w, "proj/notexec", "#!/bin/sh\n");
    let o = run(w, &["exec", "--", "./notexec"]);
    assert_eq!(o.status.code(), Some(126));
}

#[test]
fn global_flag_and_agents_dir() {
    let d = scratch();
    let w = d.path();
    write(w, "proj/.agents/env", "P=1\n");
    write(w, "alt/env", "ALT=1\n");
    let o = run(
        w,
        &[
            "env",
            "-g",
            "--agents-dir",
            "../alt",
            "--format",
            "json",
            "--diff",
        ],
    );
    let out = stdout(&o);
    assert!(out.contains("\"ALT\": \"1\""), "{out}");
    assert!(!out.contains("\"P\""), "{out}");
    assert!(
        out.contains(&format!("\"AGENTS_HOME\": \"{}/alt\"", w.display())),
        "{out}"
    );
}

/// No Python for an `env.py` layer is said as such and names
/// AGENTS_PYTHON (not "FileNotFoundError", as if the file were missing);
/// an interpreter that cannot start is named with a lower-case OS reason.
#[test]
fn no_python_for_env_py_says_so_and_names_agents_python() {
    let d = scratch();
    let w = d.path();
    write(w, "home/.agents/env.py", "print('{}')\n");
    let o = cmd(w, &["env", "--format", "json"])
        .env_remove("AGENTS_PYTHON")
        .env("PATH", w.join("empty-bin"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let err = stderr(&o);
    let file = w.join("home/.agents/env.py");
    assert!(
        err.contains(&format!(
            "agentenv: warning: env.py could not run: {}: no Python found (no python3 or python on PATH); set AGENTS_PYTHON to an interpreter",
            file.display()
        )),
        "{err}"
    );
    assert!(!err.contains("FileNotFoundError"), "{err}");
    // A pinned interpreter that is not executable.
    let fake = w.join("fake-python");
    std::fs::write(&fake, "not a program").unwrap();
    let o = cmd(w, &["env", "--format", "json"])
        .env("AGENTS_PYTHON", &fake)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "the Python interpreter {} could not be started (permission denied); set AGENTS_PYTHON to a working one",
            fake.display()
        )),
        "{err}"
    );
    assert!(
        !err.contains("PermissionDenied") && !err.contains("Permission denied"),
        "{err}"
    );
}

/// `-v`: the project root, each store (or why not), each overlay, each
/// layer that ran (kind, level, path, ok/failed, ms), the cache hit or miss
/// and why; `-vv` adds the candidates that do not exist. Default: none of it.
#[test]
fn verbose_says_what_happened_names_only() {
    let d = scratch();
    let w = d.path();
    write(w, "home/.agents/env", "A=v1SECRET\n");
    write(w, "home/.agents/overlays/tool/env", "O=v2SECRET\n");
    write(w, "proj/.agents/env", "exit 3\n");
    let home = w.join("home/.agents");
    let proj = w.join("proj/.agents");
    for sub in [
        &["env", "--format", "json"][..],
        &["exec", "true"],
        &["explain"],
    ] {
        let o = run(w, sub);
        assert!(
            o.stderr.is_empty() || !stderr(&o).contains("info"),
            "{sub:?}"
        );
        let mut args = vec!["-v"];
        args.extend(sub);
        let o = run(w, &args);
        let err = stderr(&o);
        assert!(!err.contains("SECRET"), "{err}");
        for want in [
            format!(
                "agentenv: info: the project root is {} (the current directory)",
                w.join("proj").display()
            ),
            format!("agentenv: info: store user: {}", home.display()),
            format!("agentenv: info: store project: {}", proj.display()),
            format!(
                "agentenv: info: overlay tool: {}",
                home.join("overlays/tool").display()
            ),
            format!(
                "agentenv: info: layer plain file (user) {}: ok, ",
                home.join("env").display()
            ),
            format!(
                "agentenv: info: layer plain file (project) {}: failed (",
                proj.join("env").display()
            ),
        ] {
            assert!(err.contains(&want), "{sub:?}: missing {want:?} in\n{err}");
        }
        assert!(err.contains(" ms\n"), "{err}");
        assert!(!err.contains("debug"), "{err}");
        let mut args = vec!["-vv"];
        args.extend(sub);
        let err = stderr(&run(w, &args));
        assert!(
            err.contains(&format!(
                "agentenv: debug: candidate {} (user): does not exist",
                home.join("env.py").display()
            )),
            "{err}"
        );
        // How each plain file ran.
        assert!(
            err.contains(&format!(
                "agentenv: debug: {}: evaluated natively (no bash)",
                home.join("env").display()
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "agentenv: debug: {}: sourced with bash",
                proj.join("env").display()
            )),
            "{err}"
        );
    }
    // The cache: a miss with its reason, then a hit.
    let o = run(w, &["-v", "env", "--cache", "--format", "json"]);
    assert!(
        stderr(&o).contains("agentenv: info: cache miss: no entry for this key"),
        "{}",
        stderr(&o)
    );
    let o = run(w, &["-v", "env", "--cache", "--format", "json"]);
    let err = stderr(&o);
    assert!(err.contains("agentenv: info: cache hit: "), "{err}");
    assert!(!err.contains("info: layer "), "a hit runs no layer: {err}");
}

/// The ~/.bashrc trap: `eval "$(agentenv env --diff)"` in ~/.bashrc
/// exports AGENTS_PROJECT_ROOT=$HOME, after which no project store loads.
/// The behaviour is the reference's (kept); explain and -v say why.
#[test]
fn explain_and_verbose_say_which_variable_decided_the_project_root() {
    let d = scratch();
    let w = d.path();
    write(w, "proj/.agents/env", "P=1\n");
    let trap = |args: &[&str]| {
        cmd(w, args)
            .env("AGENTS_PROJECT_ROOT", w.join("home"))
            .output()
            .unwrap()
    };
    let note = format!(
        "the project root is {}, from $AGENTS_PROJECT_ROOT; the current directory's {} was therefore not walked",
        w.join("home").display(),
        w.join("proj/.agents").display()
    );
    let o = trap(&["explain"]);
    let out = stdout(&o);
    assert!(out.contains(&format!("note: {note}")), "{out}");
    assert!(out.contains("agentenv hook"), "{out}");
    assert!(
        !out.contains("\nP "),
        "the project store really was not walked: {out}"
    );
    let o = trap(&["explain", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["notes"][0].as_str().unwrap().starts_with(&note), "{v}");
    let o = trap(&["-v", "env", "--diff"]);
    assert!(
        stderr(&o).contains(&format!("agentenv: info: {note}")),
        "{}",
        stderr(&o)
    );
    // Without the variable, no note; env's stdout never carries one.
    let o = run(w, &["explain"]);
    assert!(!stdout(&o).contains("note:"), "{}", stdout(&o));
    let o = trap(&["env", "--diff"]);
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
}
