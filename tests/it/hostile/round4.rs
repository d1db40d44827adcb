//! Hardening round 4 (issue 31, `../shared/reviews/redteam-4.md`): `set`
//! and links, `audit`'s report, the hook run as root, the masking daemon
//! against a co-user (two real uids through `setpriv`) and against a
//! confined agent (Landlock, where the kernel has it).

use super::*;

// VICTIM, ATTACKER, as_uid, need_root, chown_r, open_tree: from `hostile.rs`.

/// F7: `set` never writes through a link in the store — a cloned
/// repository's `.agents/local.env` pointing at a tracked file or at one
/// of the user's own files, or a `.agents` that is itself a link. The
/// refusal comes before any prompt and names the link and its target;
/// the target is untouched.
#[test]
fn set_refuses_a_link_in_the_store_naming_it_and_its_target() {
    let w = W::new();
    let tracked = w.write("proj/deploy/defaults.env", "A=1\n");
    let ssh = w.write("home/.ssh/config", "Host example\n  User git\n");
    // The store file a link to a tracked file, then to a file out of the
    // project.
    for target in [&tracked, &ssh] {
        let _ = std::fs::remove_file(w.p("proj/.agents/local.env"));
        let link = w.link(target, "proj/.agents/local.env");
        let before = std::fs::read(target).unwrap();
        let o = run(w.cmd(&["set", "OPENAI_API_KEY", "--project", "."]), 30);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(
            o.stderr.contains(&format!(
                "{} is a symbolic link (to {})",
                link.display(),
                target.display()
            )),
            "{}",
            o.stderr
        );
        assert!(
            !o.stderr.contains("no terminal"),
            "refused first: {}",
            o.stderr
        );
        assert_eq!(std::fs::read(target).unwrap(), before);
    }
    // The store directory a link (its file a plain file there).
    std::fs::remove_file(w.p("proj/.agents/local.env")).unwrap();
    std::fs::rename(w.p("proj/.agents"), w.p("proj/elsewhere")).unwrap();
    w.link("elsewhere", "proj/.agents");
    let o = run(w.cmd(&["set", "OPENAI_API_KEY", "--project", "."]), 30);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "{} is a symbolic link (to elsewhere)",
            w.p("proj/.agents").display()
        )),
        "{}",
        o.stderr
    );
    // The user store's file too.
    let o = run(w.cmd(&["set", "X", "--user"]), 30);
    assert!(
        o.stderr.contains("no terminal"),
        "a plain user store: {}",
        o.stderr
    );
    w.link(&ssh, "home/.agents/pre.env");
    let o = run(w.cmd(&["set", "X", "--user", "--file", "pre.env"]), 30);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("is a symbolic link (to "), "{}", o.stderr);
}

/// F12 and F13: `audit`'s text report escapes the control bytes of a file
/// name (a hostile transcript name drives no terminal), and `--fix` says
/// which fixed file has other hard links, which keep the old content.
#[test]
fn audit_escapes_file_names_and_reports_other_hard_links() {
    let w = W::new();
    let token = "ghp_zqR4auditCANARY1234";
    w.write("home/.agents/env", format!("GH_TOKEN={token}\n"));
    let line = format!("{{\"msg\":\"token {token}\"}}\n");
    let hostile = w.write(
        "logs/x\u{1b}]0;owned\u{7}\u{1b}[2K\rclean.jsonl",
        line.as_bytes(),
    );
    let t = w.write("logs/s.jsonl", line.as_bytes());
    let backup = w.p("backup.jsonl");
    std::fs::hard_link(&t, &backup).unwrap();
    let o = run(
        w.cmd(&[
            "audit",
            "--fix",
            hostile.to_str().unwrap(),
            t.to_str().unwrap(),
        ]),
        60,
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(!out.contains(token) && !o.stderr.contains(token));
    assert!(
        !out.bytes().any(|b| b == 0x1b || b == 0x07 || b == b'\r'),
        "a raw control byte in the report: {out:?}"
    );
    assert!(
        out.contains("x\\x1b]0;owned\\x07\\x1b[2K\\x0dclean.jsonl:1: GH_TOKEN"),
        "{out}"
    );
    assert!(
        out.contains("fixed ") && out.contains("\\x0dclean.jsonl: 1 occurrence replaced\n"),
        "{out}"
    );
    // The hard link keeps the token; the report says so, and how to find it.
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(&backup).unwrap().ino();
    assert!(
        out.contains(&format!(
            "fixed {}: 1 occurrence replaced; 1 other hard link of the old file keeps the old content (find them: find / -xdev -inum {ino})\n",
            t.display()
        )),
        "{out}"
    );
    assert!(std::fs::read_to_string(&backup).unwrap().contains(token));
    assert!(!std::fs::read_to_string(&t).unwrap().contains(token));
    // JSON says it too.
    std::fs::write(&t, line.as_bytes()).unwrap();
    std::fs::remove_file(&backup).unwrap();
    std::fs::hard_link(&t, &backup).unwrap();
    let o = run(
        w.cmd(&["audit", "--fix", "--format", "json", t.to_str().unwrap()]),
        60,
    );
    let j = o.json();
    assert_eq!(j["fixes"][0]["other_links"], 1, "{j}");
}

/// Every file under `p` (links not followed) owned by `uid`.
fn owned_by(p: &Path, uid: u32) -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    let mut todo = vec![p.to_path_buf()];
    while let Some(p) = todo.pop() {
        let Ok(md) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if md.uid() == uid {
            found.push(p.clone());
        }
        if md.is_dir() {
            todo.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
        }
    }
    found
}

/// Item 15 (left from round 3): the hooks run as root with another user's
/// `HOME` (`sudo -E`) create nothing in that home — no root-owned
/// `~/.local/state`, no `.cache` in the store — with a store there and
/// without one.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn hooks_run_as_root_create_nothing_in_another_users_home() {
    if !need_root("hooks as root in another user's home") {
        return;
    }
    let w = open_tree();
    w.t.mkdir("elsewhere");
    let with_store = w.write("vhome/.agents/env", format!("S={CANARY}\n"));
    let vhome = with_store.parent().unwrap().parent().unwrap().to_path_buf();
    let bare = w.t.mkdir("vhome2");
    for home in [&vhome, &bare] {
        chown_r(home, VICTIM);
        let event = serde_json::json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "cwd": w.p("elsewhere"),
            "tool_name": "Bash", "tool_input": {"command": "true"}
        })
        .to_string();
        for args in [
            &["hook", "bash", "--load", "--pid", "1"][..],
            &["hook", "zsh", "--load", "--pid", "1"],
            &["hook", "claude", "pre-tool-use"],
            &["hook", "codex", "pre-tool-use"],
            &["hook", "claude", "session-start"],
        ] {
            let mut c = in_dir(&w, home, &w.p("elsewhere"), args);
            c.env_remove("AGENTENV_HOOK_CACHE")
                .env("CLAUDE_ENV_FILE", w.p("claude-env.sh"))
                .env("XDG_RUNTIME_DIR", w.p("no-run"));
            let mut child = c
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::io::Write::write_all(&mut child.stdin.take().unwrap(), event.as_bytes()).unwrap();
            let o = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!err.contains(CANARY), "{args:?}: {err}");
            let ours = owned_by(home, 0);
            assert!(
                ours.is_empty(),
                "{args:?} as root created {ours:?} in {} ({err})",
                home.display()
            );
        }
    }
}
