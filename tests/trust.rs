//! `agentenv allow`/`deny` and the `--require-trust` gate of `env`, `exec`
//! and `explain` (SPEC §11), through the binary.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

fn tree() -> (tempfile::TempDir, std::path::PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().canonicalize().unwrap();
    std::fs::create_dir_all(w.join("home/.agents")).unwrap();
    std::fs::create_dir_all(w.join("proj/.agents")).unwrap();
    std::fs::write(w.join("home/.agents/env"), "FROM_USER=1\n").unwrap();
    std::fs::write(w.join("proj/.agents/env"), "FROM_PROJ=1\n").unwrap();
    (t, w)
}

fn cmd(w: &Path) -> Command {
    let mut c = support::session_cmd(w);
    c.env("XDG_STATE_HOME", w.join("state"));
    c
}

fn env_json(w: &Path, extra: &[&str], vars: &[(&str, &str)]) -> (serde_json::Value, String) {
    let mut c = cmd(w);
    c.args(["env", "--format", "json", "--diff"]).args(extra);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn gate_off_by_default_on_with_flag_or_env() {
    let (_t, w) = tree();
    // Without the gate: the reference's behaviour, no message.
    let (j, err) = env_json(&w, &[], &[]);
    assert_eq!(j["FROM_PROJ"], "1");
    assert!(err.is_empty(), "{err}");
    // With it: the project store is skipped, the user store still loads.
    for (extra, vars) in [
        (&["--require-trust"][..], &[][..]),
        (&[][..], &[("AGENTENV_REQUIRE_TRUST", "1")][..]),
    ] {
        let (j, err) = env_json(&w, extra, vars);
        assert!(j.get("FROM_PROJ").is_none(), "{j}");
        assert_eq!(j["FROM_USER"], "1");
        assert!(err.contains("proj/.agents is not allowed"), "{err}");
    }
    // AGENTENV_REQUIRE_TRUST=0 is off.
    let (j, _) = env_json(&w, &[], &[("AGENTENV_REQUIRE_TRUST", "0")]);
    assert_eq!(j["FROM_PROJ"], "1");

    let out = cmd(&w).arg("allow").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty());
    let (j, err) = env_json(&w, &["--require-trust"], &[]);
    assert_eq!(j["FROM_PROJ"], "1");
    assert!(err.is_empty(), "{err}");

    // An edit blocks the store until it is allowed again.
    std::fs::write(w.join("proj/.agents/env"), "FROM_PROJ=2\n").unwrap();
    let (j, err) = env_json(&w, &["--require-trust"], &[]);
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
    assert!(err.contains("changed since it was allowed"), "{err}");
    // exec and explain apply the same gate.
    let out = cmd(&w)
        .args([
            "exec",
            "--require-trust",
            "sh",
            "-c",
            "echo \"[${FROM_PROJ-}]\"",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "[]\n");
    let out = cmd(&w)
        .args(["explain", "--require-trust", "--format", "json"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("FROM_PROJ"));
    assert!(cmd(&w).arg("allow").status().unwrap().success());
    let (j, _) = env_json(&w, &["--require-trust"], &[]);
    assert_eq!(j["FROM_PROJ"], "2");

    // deny forgets it.
    let out = cmd(&w).arg("deny").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied"));
    let (j, _) = env_json(&w, &["--require-trust"], &[]);
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
}

#[test]
fn state_files_are_owner_only_and_an_open_state_dir_is_refused() {
    let (_t, w) = tree();
    assert!(cmd(&w).args(["allow", "."]).status().unwrap().success());
    let state = w.join("state/agentenv");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&state.join("allowed")), 0o700);
    for e in std::fs::read_dir(state.join("allowed")).unwrap().flatten() {
        assert_eq!(mode(&e.path()), 0o600);
    }
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = cmd(&w).arg("allow").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing the trust state directory"), "{err}");
    let (j, err) = env_json(&w, &["--require-trust"], &[]);
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
    assert!(err.contains("refusing"), "{err}");
}

#[test]
fn concurrent_allows_leave_whole_records() {
    let (_t, w) = tree();
    for i in 0..8 {
        std::fs::create_dir_all(w.join(format!("p{i}/.agents"))).unwrap();
    }
    let kids: Vec<_> = (0..8)
        .flat_map(|i| [i, i])
        .map(|i| {
            cmd(&w)
                .args(["allow", &format!("../p{i}")])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let records: Vec<_> = std::fs::read_dir(w.join("state/agentenv/allowed"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(records.len(), 8, "one record per store, no temp files left");
    for i in 0..8 {
        let mut c = cmd(&w);
        c.current_dir(w.join(format!("p{i}")));
        std::fs::write(w.join(format!("p{i}/.agents/env")), "").unwrap();
        let out = c
            .args(["env", "--require-trust", "--format", "json"])
            .output()
            .unwrap();
        // Changed (a file was added) — the record was read whole.
        assert!(String::from_utf8_lossy(&out.stderr).contains("changed since"));
    }
}

#[test]
fn allow_without_a_project_says_what_to_do() {
    let (_t, w) = tree();
    std::fs::create_dir_all(w.join("home/empty")).unwrap();
    let mut c = cmd(&w);
    c.current_dir(w.join("home/empty")).arg("allow");
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("agentenv allow DIR"));
}

/// `allow` and `deny` say what they did in one line (`-q` silences it)
/// and fail with one `agentenv: error:` line, exit 1.
#[test]
fn allow_and_deny_say_one_line_and_fail_once() {
    let (_t, w) = tree();
    let store = w.join("proj/.agents");
    let run = |args: &[&str]| {
        let out = cmd(&w).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        run(&["allow"]),
        (Some(0), format!("agentenv: allowed {}\n", store.display()))
    );
    assert_eq!(run(&["allow", "-q"]), (Some(0), String::new()));
    assert_eq!(
        run(&["deny"]),
        (Some(0), format!("agentenv: denied {}\n", store.display()))
    );
    assert_eq!(
        run(&["deny"]),
        (
            Some(0),
            format!("agentenv: {} was not allowed\n", store.display())
        )
    );
    let state = w.join("state/agentenv");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    for verb in ["allow", "deny"] {
        let (code, err) = run(&[verb, "-q"]);
        assert_eq!(code, Some(1), "{verb}");
        assert_eq!(
            err,
            format!(
                "agentenv: error: cannot {verb} {}: refusing the trust state directory {}: it is writable by group or others; fix its owner or mode (0700)\n",
                store.display(),
                state.display()
            ),
            "{verb}"
        );
    }
}
