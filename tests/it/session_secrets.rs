//! A canary value planted in every layer kind and every failure path of
//! `agentenv env` / `exec` must never reach stderr, at any verbosity.

use crate::support;

use support::{Run, Tree};

const CANARY: &str = "canary-7f3a9c-SECRET";

/// Write `body` with `CANARY` spelled out.
fn write(t: &Tree, rel: &str, body: &str) {
    t.write(rel, body.replace("CANARY", CANARY));
}

/// A tree where every layer kind holds the canary, and every failure path
/// has it in the failing file's output or text.
fn tree() -> Tree {
    let t = Tree::session();
    let w = &t;
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
    t
}

/// `agentenv ARGS` with the canary in the caller's environment too (a
/// variable the project env unsets, a DOTAGENTS_ one, an overlay root) and
/// no pinned interpreter; stderr must not hold the canary or a part of it.
fn agentenv(t: &Tree, args: &[&str]) -> Run {
    t.agentenv(args)
        .env_remove("AGENTS_PYTHON")
        .env("BASE_SECRET", CANARY)
        .env("DOTAGENTS_TOKEN", CANARY)
        .env("CANARY_OVERLAY_ROOT", CANARY)
        .stderr_lacks(CANARY)
        .stderr_lacks("7f3a9c")
}

/// Every layer kind and failure path at one verbosity, both formats.
fn nothing_leaks_at(verbosity: &[&str]) {
    let t = tree();
    let py = support::which("python3").expect("python3");
    for fmt in ["json", "export"] {
        let mut args: Vec<&str> = verbosity.to_vec();
        args.extend(["env", "--format", fmt, "--diff", "--timeout", "2"]);
        let mut run = agentenv(&t, &args)
            .env("AGENTS_PYTHON", &py)
            // The applying layers did apply (so the canary was really there).
            .stdout_has("PY_SECRET")
            .stdout_has(CANARY)
            // The failed layers contributed nothing.
            .stdout_lacks("\"SLOW\"");
        for warning in [
            "env.py failed (exit 4)",
            "env.py output not JSON",
            "timed out",
            "output over 16 MiB",
            "env file source failed",
            "skipped NUL_KEY (value contains NUL)",
            "skipped INT_KEY (value is a JSON int, not a string)",
            "skipped SUR (value is not UTF-8)",
        ] {
            run = run.stderr_has(warning);
        }
        run.run();
    }
}

#[test]
fn no_layer_or_failure_leaks_into_stderr() {
    nothing_leaks_at(&[]);
}

#[test]
fn no_layer_or_failure_leaks_into_stderr_at_v() {
    nothing_leaks_at(&["-v"]);
}

#[test]
fn no_layer_or_failure_leaks_into_stderr_at_vv() {
    nothing_leaks_at(&["-vv"]);
}

#[test]
fn odd_settings_never_echo_their_values() {
    let t = Tree::session();
    write(&t, "home/.agents/env.py", "print('{}')\n");
    for (k, v) in [
        ("AGENTS_SYSTEM_ROOT", format!("rel/{CANARY}")),
        ("AGENTS_ENV_TIMEOUT", CANARY.to_string()),
        ("AGENTS_PYTHON", format!("/nonexistent/{CANARY}")),
        ("AGENTS_HOME", format!("~{CANARY}/x")),
    ] {
        for args in [
            &["-vv", "env", "--format", "json"][..],
            &["-vv", "exec", "--", "true"][..],
        ] {
            agentenv(&t, args).env(k, &v).any_status().run();
        }
    }
}

#[test]
fn an_unknown_agent_is_not_echoed() {
    // A bad --format value is echoed by the reference's message only as the
    // flag's own text (not a secret); an unknown agent is not echoed.
    agentenv(&Tree::session(), &["exec", "--agent", CANARY, "--", "true"])
        .status(2)
        .run();
}

#[test]
fn exec_failures_do_not_leak() {
    agentenv(
        &tree(),
        &["-vv", "exec", "--timeout", "2", "--", "/nonexistent/cmd"],
    )
    .status(127)
    .run();
}
