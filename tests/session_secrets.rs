//! A canary value planted in every layer kind and every failure path of
//! `agentenv env` / `exec` must never reach stderr, at any verbosity.

mod support;

use std::path::Path;
use std::process::Command;

const CANARY: &str = "canary-7f3a9c-SECRET";

fn write(w: &Path, rel: &str, body: &str) {
    let p = w.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body.replace("CANARY", CANARY)).unwrap();
}

/// A tree where every layer kind holds the canary, and every failure path
/// has it in the failing file's output or text.
fn tree(w: &Path) {
    let py = |body: &str| format!("import json, os, sys, time\n{body}\n");
    // Layers that apply (the value shows on stdout only).
    write(w, "home/.agents/pre.env", "PRE_SECRET=CANARY\n");
    write(w, "home/.agents/env.py", &py("print(json.dumps({'PY_SECRET': 'CANARY', 'NUL_KEY': 'CANARY\\u0000', 'INT_KEY': 5, 'SUR': '\\udc80CANARY'}))"));
    write(
        w,
        "proj/.agents/local.env",
        "LOCAL_SECRET='CANARY'\nf() { echo CANARY; }\n",
    );
    // Failure paths.
    write(
        w,
        "home/.agents/overlays/fails/env.py",
        &py("sys.stderr.write('CANARY\\n')\nprint('CANARY')\nsys.exit(4)"),
    );
    write(
        w,
        "home/.agents/overlays/badjson/env.py",
        &py("print('{\"K\": \"CANARY\" oops}')"),
    );
    write(
        w,
        "home/.agents/overlays/unterminated/env.py",
        &py("print('{\"K\": \"CANARY')"),
    );
    write(
        w,
        "home/.agents/overlays/notobj/env.py",
        &py("print('[\"CANARY\"]')"),
    );
    write(
        w,
        "home/.agents/overlays/perline/env.py",
        &py("print('{\"A\": \"1\"}')\nprint('CANARY')"),
    );
    write(
        w,
        "home/.agents/overlays/crash/env.py",
        "raise RuntimeError('CANARY')\n",
    );
    write(w, "home/.agents/overlays/slow/env.py", &py("print(json.dumps({'SLOW': 'CANARY'}), flush=True)\nsys.stderr.write('CANARY')\ntime.sleep(30)"));
    write(
        w,
        "home/.agents/overlays/huge/env.py",
        &py("sys.stdout.write('CANARY' * (17 * 1024 * 1024 // 20 + 1))"),
    );
    write(
        w,
        "home/.agents/overlays/shfail/env",
        "X=CANARY\necho CANARY\necho CANARY >&2\nexit 3\n",
    );
    write(
        w,
        "home/.agents/overlays/shsyntax/env",
        "X=CANARY\nif CANARY then\n",
    );
    write(w, "home/.agents/overlays/shlast/env", "X=CANARY\nfalse\n");
    write(
        w,
        "home/.agents/overlays/shslow/env",
        "X=CANARY\necho CANARY >&2\nsleep 30\n",
    );
    write(
        w,
        "proj/.agents/env",
        "unset BASE_SECRET\nexport HTTPS_PROXY=http://CANARY@proxy:1\n",
    );
    std::fs::create_dir_all(w.join("proj")).unwrap();
}

fn run(w: &Path, args: &[&str], extra: &[(&str, String)]) -> std::process::Output {
    let mut cmd = Command::new(support::agentenv_bin());
    cmd.args(args)
        .current_dir(w.join("proj"))
        .env_clear()
        .env("HOME", w.join("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("AGENTS_SYSTEM_ROOT", w.join("no-system"))
        .env("BASE_SECRET", CANARY)
        .env("DOTAGENTS_TOKEN", CANARY)
        .env("CANARY_OVERLAY_ROOT", CANARY);
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn assert_clean(out: &std::process::Output, what: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains(CANARY),
        "{what}: stderr leaked the canary:\n{err}"
    );
    assert!(
        !err.contains("7f3a9c"),
        "{what}: stderr leaked part of the canary:\n{err}"
    );
}

#[test]
fn no_layer_or_failure_leaks_into_stderr() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    tree(w);
    let py = support::which("python3").expect("python3");
    let pin = vec![("AGENTS_PYTHON", py.to_string_lossy().into_owned())];
    for verbosity in [&[][..], &["-v"][..], &["-vv"][..]] {
        for fmt in ["json", "export"] {
            let mut args: Vec<&str> = verbosity.to_vec();
            args.extend(["env", "--format", fmt, "--diff", "--timeout", "2"]);
            let out = run(w, &args, &pin);
            assert_eq!(out.status.code(), Some(0), "{args:?}");
            assert_clean(&out, &format!("{args:?}"));
            let stdout = String::from_utf8_lossy(&out.stdout);
            // The applying layers did apply (so the canary was really there).
            assert!(stdout.contains("PY_SECRET"), "{stdout}");
            assert!(stdout.contains(CANARY), "{stdout}");
            // The failed layers contributed nothing.
            assert!(!stdout.contains("\"SLOW\""), "{stdout}");
            let err = String::from_utf8_lossy(&out.stderr);
            for needle in [
                "env.py failed (exit 4)",
                "env.py output not JSON",
                "timed out",
                "output over 16 MiB",
                "env file source failed",
                "skipped NUL_KEY (value contains NUL)",
                "skipped INT_KEY (value is a JSON int, not a string)",
                "skipped SUR (value is not UTF-8)",
            ] {
                assert!(
                    err.contains(needle),
                    "missing warning {needle:?} in:\n{err}"
                );
            }
        }
    }
}

#[test]
fn odd_settings_never_echo_their_values() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    std::fs::create_dir_all(w.join("proj")).unwrap();
    for (k, v) in [
        ("AGENTS_SYSTEM_ROOT", format!("rel/{CANARY}")),
        ("AGENTS_ENV_TIMEOUT", CANARY.to_string()),
        ("AGENTS_PYTHON", format!("/nonexistent/{CANARY}")),
        ("AGENTS_HOME", format!("~{CANARY}/x")),
    ] {
        write(w, "home/.agents/env.py", "print('{}')\n");
        for args in [
            &["-vv", "env", "--format", "json"][..],
            &["-vv", "exec", "--", "true"][..],
        ] {
            let out = run(w, args, &[(k, v.clone())]);
            assert_clean(&out, &format!("{k} {args:?}"));
        }
    }
    // A bad --format value is echoed by the reference's message only as the
    // flag's own text (not a secret); an unknown agent is not echoed.
    let out = run(w, &["exec", "--agent", CANARY, "--", "true"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_clean(&out, "--agent");
}

#[test]
fn exec_failures_do_not_leak() {
    let d = tempfile::tempdir().unwrap();
    let w = d.path();
    tree(w);
    let out = run(
        w,
        &["-vv", "exec", "--timeout", "2", "--", "/nonexistent/cmd"],
        &[],
    );
    assert_eq!(out.status.code(), Some(127));
    assert_clean(&out, "exec not found");
}
