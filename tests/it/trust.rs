//! `agentenv allow`/`deny` and the `--require-trust` gate of `env`, `exec` and
//! `explain` (docs/shells.md#the-shell-hook-and-trust), through the binary.

use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use support::{Run, Tree};

/// A user store and a project store, each setting one variable.
fn tree() -> Tree {
    Tree::session()
        .file("home/.agents/env", "FROM_USER=1\n")
        .file("proj/.agents/env", "FROM_PROJ=1\n")
}

/// `agentenv ARGS` with the trust state in `$W/state`.
fn agentenv(t: &Tree, args: &[&str]) -> Run {
    t.agentenv(args).env("XDG_STATE_HOME", t.path("state"))
}

/// `env --format json --diff EXTRA…` (it must succeed).
fn env_json(t: &Tree, extra: &[&str]) -> Run {
    agentenv(t, &["env", "--format", "json", "--diff"]).args(extra)
}

#[test]
fn gate_is_off_by_default() {
    // The reference's behaviour, no message.
    let t = tree();
    let j = env_json(&t, &[]).stderr("").run().json();
    assert_eq!(j["FROM_PROJ"], "1");
}

#[test]
fn gate_on_skips_the_project_store_and_loads_the_user_store() {
    let t = tree();
    for run in [
        env_json(&t, &["--require-trust"]),
        env_json(&t, &[]).env("AGENTENV_REQUIRE_TRUST", "1"),
    ] {
        let j = run.stderr_has("proj/.agents is not allowed").run().json();
        assert!(j.get("FROM_PROJ").is_none(), "{j}");
        assert_eq!(j["FROM_USER"], "1");
    }
}

#[test]
fn require_trust_0_is_off() {
    let t = tree();
    let j = env_json(&t, &[])
        .env("AGENTENV_REQUIRE_TRUST", "0")
        .run()
        .json();
    assert_eq!(j["FROM_PROJ"], "1");
}

#[test]
fn an_allowed_store_loads_through_the_gate() {
    let t = tree();
    agentenv(&t, &["allow"]).stdout("").run();
    let j = env_json(&t, &["--require-trust"]).stderr("").run().json();
    assert_eq!(j["FROM_PROJ"], "1");
}

/// An allowed store, then edited.
fn allowed_then_edited() -> Tree {
    let t = tree();
    agentenv(&t, &["allow"]).run();
    t.write("proj/.agents/env", "FROM_PROJ=2\n");
    t
}

#[test]
fn an_edit_blocks_the_store_until_it_is_allowed_again() {
    let t = allowed_then_edited();
    let j = env_json(&t, &["--require-trust"])
        .stderr_has("changed since it was allowed")
        .run()
        .json();
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
    agentenv(&t, &["allow"]).run();
    let j = env_json(&t, &["--require-trust"]).run().json();
    assert_eq!(j["FROM_PROJ"], "2");
}

#[test]
fn the_digest_covers_agentenv_toml() {
    // The declarations decide what `env --public-only` shows: adding or
    // editing them is a change like any other
    // (docs/session.md#sensitive-and-public-values).
    let t = tree().file(
        "proj/.agents/agentenv.toml",
        "[vars]\nFROM_PROJ = { public = true }\n",
    );
    agentenv(&t, &["allow"]).run();
    let j = env_json(&t, &["--require-trust", "--public-only"])
        .stderr("")
        .run()
        .json();
    assert_eq!(j["FROM_PROJ"], "1");
    t.write(
        "proj/.agents/agentenv.toml",
        "[vars]\nFROM_PROJ = { public = true }\n\"A_*\" = { public = true }\n",
    );
    let j = env_json(&t, &["--require-trust"])
        .stderr_has("changed since it was allowed")
        .run()
        .json();
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
    agentenv(&t, &["allow"]).run();
    std::fs::remove_file(t.path("proj/.agents/agentenv.toml")).unwrap();
    env_json(&t, &["--require-trust"])
        .stderr_has("changed since it was allowed")
        .run();
}

#[test]
fn exec_and_explain_apply_the_same_gate() {
    let t = allowed_then_edited();
    agentenv(
        &t,
        &[
            "exec",
            "--require-trust",
            "sh",
            "-c",
            "echo \"[${FROM_PROJ-}]\"",
        ],
    )
    .any_status()
    .stdout("[]\n")
    .run();
    agentenv(&t, &["explain", "--require-trust", "--format", "json"])
        .any_status()
        .stdout_lacks("FROM_PROJ")
        .run();
}

#[test]
fn deny_forgets_an_allowed_store() {
    let t = tree();
    agentenv(&t, &["allow"]).run();
    agentenv(&t, &["deny"]).stderr_has("denied").run();
    let j = env_json(&t, &["--require-trust"]).run().json();
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn state_files_are_owner_only() {
    let t = tree();
    agentenv(&t, &["allow", "."]).run();
    let state = t.path("state/agentenv");
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&state.join("allowed")), 0o700);
    for e in std::fs::read_dir(state.join("allowed")).unwrap().flatten() {
        assert_eq!(mode(&e.path()), 0o600);
    }
}

#[test]
fn an_open_state_dir_is_refused() {
    let t = tree();
    agentenv(&t, &["allow", "."]).run();
    std::fs::set_permissions(
        t.path("state/agentenv"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    agentenv(&t, &["allow"])
        .status(1)
        .stderr_has("refusing the trust state directory")
        .run();
    let j = env_json(&t, &["--require-trust"])
        .stderr_has("refusing")
        .run()
        .json();
    assert!(j.get("FROM_PROJ").is_none(), "{j}");
}

#[test]
fn concurrent_allows_leave_whole_records() {
    let t = tree();
    for i in 0..8 {
        t.mkdir(&format!("p{i}/.agents"));
    }
    let kids: Vec<_> = (0..8)
        .flat_map(|i| [i, i])
        .map(|i| {
            support::session_cmd(t.root())
                .env("XDG_STATE_HOME", t.path("state"))
                .args(["allow", &format!("../p{i}")])
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut k in kids {
        assert!(k.wait().unwrap().success());
    }
    let records: Vec<_> = std::fs::read_dir(t.path("state/agentenv/allowed"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(records.len(), 8, "one record per store, no temp files left");
    for i in 0..8 {
        t.write(&format!("p{i}/.agents/env"), "");
        // Changed (a file was added) — the record was read whole.
        agentenv(&t, &["env", "--require-trust", "--format", "json"])
            .cwd(format!("p{i}"))
            .any_status()
            .stderr_has("changed since")
            .run();
    }
}

#[test]
fn allow_without_a_project_says_what_to_do() {
    let t = tree().dir("home/empty");
    agentenv(&t, &["allow"])
        .cwd("home/empty")
        .status(1)
        .stderr_has("agentenv allow DIR")
        .run();
}

/// `allow` and `deny` say what they did in one line (`-q` silences it).
#[test]
fn allow_and_deny_say_one_line() {
    let t = tree();
    agentenv(&t, &["allow"])
        .stderr("agentenv: allowed $W/proj/.agents\n")
        .run();
    agentenv(&t, &["allow", "-q"]).stderr("").run();
    agentenv(&t, &["deny"])
        .stderr("agentenv: denied $W/proj/.agents\n")
        .run();
    agentenv(&t, &["deny"])
        .stderr("agentenv: $W/proj/.agents was not allowed\n")
        .run();
}

/// They fail with one `agentenv: error:` line, exit 1, even with `-q`.
#[test]
fn allow_and_deny_fail_once() {
    let t = tree();
    agentenv(&t, &["allow"]).run();
    std::fs::set_permissions(
        t.path("state/agentenv"),
        std::fs::Permissions::from_mode(0o777),
    )
    .unwrap();
    for verb in ["allow", "deny"] {
        agentenv(&t, &[verb, "-q"])
            .status(1)
            .stderr(format!(
                "agentenv: error: cannot {verb} $W/proj/.agents: refusing the trust state directory $W/state/agentenv: it is writable by group or others; fix its owner or mode (0700)\n"
            ))
            .run();
    }
}

/// Issue 21's drift: `env` and `status` decide the system store by one
/// rule. With `AGENTS_SYSTEM_ROOT='~/sys'` (a root-owned store, after `~`
/// expansion) `env` loads it, so `status` must report it present.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn env_and_status_agree_on_a_tilde_system_root() {
    if !rustix::process::geteuid().is_root() {
        support::skip("~ system root", "needs root to own a system store");
        return;
    }
    let t = tree().file("home/sys/env", "FROM_SYS=1\n");
    std::fs::set_permissions(t.path("home/sys"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let j = env_json(&t, &[])
        .env("AGENTS_SYSTEM_ROOT", "~/sys")
        .run()
        .json();
    assert_eq!(j["FROM_SYS"], "1");
    let s = agentenv(&t, &["status", "--format", "json"])
        .env("AGENTS_SYSTEM_ROOT", "~/sys")
        .run()
        .json();
    assert_eq!(s["stores"][0]["level"], "system", "{s}");
    assert_eq!(s["stores"][0]["state"], "present", "{s}");
    assert_eq!(s["stores"][0]["path"], t.arg("home/sys"), "{s}");
}
