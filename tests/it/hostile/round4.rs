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
                .env("CLAUDE_ENV_FILE", w.p("sess/claude-env.sh"))
                .env("XDG_RUNTIME_DIR", w.p("no-run"));
            let mut child = c
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // (The shell hooks read no stdin: a closed pipe is fine.)
            let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), event.as_bytes());
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

// ---------------------------------------------------------------------------
// The masking daemon and the rewritten command (F1, F4, F5, F6, F11).

const TOKEN: &str = "ghp_zqR4daemonCANARY5678";

/// A scratch world for the agent hooks: a user store with `GH_TOKEN`, a
/// project, the session's env file, `run/` as `$XDG_RUNTIME_DIR` (the
/// daemon's base), all owned by `uid` (0: the tests' own user); commands
/// run as `uid`. `bin` is the agentenv the hooks name (a copy, for the
/// cases that replace it).
struct Agent {
    w: W,
    uid: u32,
    daemon: bool,
    bin: PathBuf,
}

impl Agent {
    fn new(uid: u32, daemon: bool) -> Agent {
        let w = open_tree();
        w.write("home/.agents/env", format!("GH_TOKEN={TOKEN}\n"));
        w.t.mkdir("proj");
        let run = w.t.mkdir("run");
        chmod(&run, 0o700);
        let bin = w.p("bin/agentenv");
        std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
        support::copy_agentenv_bin(&bin);
        w.t.mkdir("sess");
        if uid != 0 {
            for d in ["home", "proj", "run", "bin", "sess"] {
                chown_r(&w.p(d), uid);
            }
        }
        let a = Agent {
            w,
            uid,
            daemon,
            bin,
        };
        let o = a.run_cmd(a.hook_cmd(&["hook", "claude", "session-start"]), b"");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        if daemon {
            a.start_daemon();
        }
        a
    }

    fn hook_cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.env_clear()
            .env("HOME", self.w.p("home"))
            .env("PATH", "/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .env("TMPDIR", self.w.p("run"))
            .env("XDG_RUNTIME_DIR", self.w.p("run"))
            .env("CLAUDE_ENV_FILE", self.w.p("sess/claude-env.sh"))
            .env("AGENTS_SYSTEM_ROOT", self.w.p("no-system"))
            .current_dir(self.w.p("proj"))
            .args(args);
        if !self.daemon {
            c.env("AGENTENV_NO_DAEMON", "1");
        }
        c
    }

    /// `c` as this world's user, `stdin` fed, with a bound.
    fn run_cmd(&self, c: Command, stdin: &[u8]) -> std::process::Output {
        let mut c = if self.uid == 0 {
            c
        } else {
            as_uid(self.uid, &c)
        };
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The world's copy of the binary may still be open for writing in
        // a child another test thread forked meanwhile (ETXTBSY until that
        // child execs): try again.
        let mut tries = 0;
        let mut child = loop {
            match c.spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => break r.unwrap(),
            }
        };
        let mut si = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut si, &data);
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let pid = child.id();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(o) => o.unwrap(),
            Err(_) => {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
                panic!(
                    "{:?} did not finish within 60 s (a hang)",
                    c.get_args().collect::<Vec<_>>()
                );
            }
        }
    }

    /// The hook's rewrite of `command`.
    fn rewrite(&self, command: &str) -> String {
        let ev = serde_json::json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "cwd": self.w.p("proj"),
            "tool_name": "Bash", "tool_input": {"command": command}
        })
        .to_string();
        let o = self.run_cmd(
            self.hook_cmd(&["hook", "claude", "pre-tool-use"]),
            ev.as_bytes(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The answer of the hook for a file tool.
    fn file_tool(&self, tool: &str, input: serde_json::Value) -> serde_json::Value {
        let ev = serde_json::json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "cwd": self.w.p("proj"),
            "tool_name": tool, "tool_input": input
        })
        .to_string();
        let o = self.run_cmd(
            self.hook_cmd(&["hook", "claude", "pre-tool-use"]),
            ev.as_bytes(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        if o.stdout.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_slice(&o.stdout).unwrap()
        }
    }

    fn daemon_dir(&self) -> Option<PathBuf> {
        support::masking_daemon_dir(&self.w.p("run"))
    }

    fn daemon_pid(&self) -> Option<u32> {
        support::masking_daemon_pid(&self.w.p("run"))
    }

    fn start_daemon(&self) {
        for _ in 0..300 {
            if self.daemon_pid().is_some()
                && self
                    .rewrite("true")
                    .lines()
                    .next()
                    .unwrap()
                    .split(' ')
                    .count()
                    == 5
            {
                return;
            }
            self.rewrite("true");
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the masking daemon did not start");
    }

    /// `rewritten` run as Claude Code runs it (the env file pasted ahead),
    /// by bash as this world's user: (stdout, stderr, status).
    fn claude_cmd(&self, rewritten: &str) -> Command {
        let env_file = std::fs::read_to_string(self.w.p("sess/claude-env.sh")).unwrap();
        let q = format!("'{}'", rewritten.replace('\'', "'\\''"));
        let mut c = Command::new("bash");
        c.env_clear()
            .env("HOME", self.w.p("home"))
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", self.w.p("run"))
            .env("XDG_RUNTIME_DIR", self.w.p("run"))
            .current_dir(self.w.p("proj"))
            .args(["-c", &format!("{env_file}\neval {q}")]);
        c
    }

    fn claude(&self, rewritten: &str) -> (String, String, i32) {
        let o = self.run_cmd(self.claude_cmd(rewritten), b"");
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            o.status.code().unwrap_or(-1),
        )
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        if let Some(pid) = self.daemon_pid() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn has_bash() -> bool {
    support::tool("bash").is_some()
}

/// F4: the command reaches no copy of the shell's real stdout or stderr:
/// the saved descriptors (`$__ae_o`, `$__ae_e`) are closed before it runs
/// (a builtin's `>&$__ae_o`, a child writing to every inherited
/// descriptor), and `__agentenv_undo` has nothing to restore — through
/// the daemon and through the helper.
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn the_command_reaches_no_saved_descriptor() {
    if !has_bash() {
        return;
    }
    // The portable path has no daemon: the helper alone there.
    let modes: &[bool] = if cfg!(agentenv_portable) {
        &[false]
    } else {
        &[true, false]
    };
    for &daemon in modes {
        let a = Agent::new(0, daemon);
        let cmd = a.rewrite(
            "printf 'A:%s\\n' \"$GH_TOKEN\" >&${__ae_o:-1}; printf 'E:%s\\n' \"$GH_TOKEN\" >&${__ae_e:-2}; \
             python3 -c 'import os\nfor fd in range(3, 256):\n  try: os.write(fd, (\"C:\" + os.environ[\"GH_TOKEN\"] + \"\\n\").encode())\n  except OSError: pass'; \
             __agentenv_undo; echo \"B:$GH_TOKEN\"; echo done",
        );
        let (out, err, st) = a.claude(&cmd);
        let mode = if daemon { "daemon" } else { "helper" };
        assert!(
            !out.contains(TOKEN) && !err.contains(TOKEN),
            "{mode}: {out}\n{err}"
        );
        assert!(
            out.contains("A:[REDACTED:GH_TOKEN]"),
            "{mode}: {out}\n{err}"
        );
        assert!(out.contains("done"), "{mode}: {out}\n{err}");
        assert_eq!(st, 0, "{mode}: {err}");
    }
}

/// F11: the file tools are denied a process's `environ`, `mem` and
/// `cmdline` (a background job of a wrapped command carries every
/// secret), by pid, `self`, a task, a link or a glob; other `/proc` files
/// stay readable.
#[test]
fn file_tools_are_denied_process_environments() {
    let a = Agent::new(0, false);
    let mut bg = Command::new("sleep")
        .arg("30")
        .env("GH_TOKEN", TOKEN)
        .spawn()
        .unwrap();
    let pid = bg.id();
    let link = a.w.p("proj/env-of-job");
    std::os::unix::fs::symlink(format!("/proc/{pid}/environ"), &link).unwrap();
    let denied = |v: &serde_json::Value| {
        v["hookSpecificOutput"]["permissionDecision"] == "deny"
            && v["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("/proc/PID/environ")
    };
    for (tool, input) in [
        (
            "Read",
            serde_json::json!({"file_path": format!("/proc/{pid}/environ")}),
        ),
        (
            "Read",
            serde_json::json!({"file_path": format!("/proc/{pid}/task/{pid}/environ")}),
        ),
        (
            "Read",
            serde_json::json!({"file_path": format!("/proc/{pid}/cmdline")}),
        ),
        (
            "Read",
            serde_json::json!({"file_path": format!("/proc/{pid}/mem")}),
        ),
        (
            "Read",
            serde_json::json!({"file_path": "/proc/self/environ"}),
        ),
        ("Read", serde_json::json!({"file_path": "env-of-job"})),
        (
            "Grep",
            serde_json::json!({"pattern": "GH_", "path": "/proc", "glob": "environ"}),
        ),
        (
            "Grep",
            serde_json::json!({"pattern": "GH_", "path": format!("/proc/{pid}")}),
        ),
        ("Glob", serde_json::json!({"pattern": "/proc/*/environ"})),
    ] {
        let v = a.file_tool(tool, input.clone());
        assert!(denied(&v), "{tool} {input}: {v}");
    }
    for (tool, input) in [
        ("Read", serde_json::json!({"file_path": "/proc/cpuinfo"})),
        (
            "Read",
            serde_json::json!({"file_path": format!("/proc/{pid}/status")}),
        ),
    ] {
        let v = a.file_tool(tool, input.clone());
        assert!(v.is_null(), "{tool} {input}: {v}");
    }
    let _ = bg.kill();
    let _ = bg.wait();
}

/// Run `script` (sh) in a private mount namespace whose `/dev/shm` is a
/// fresh tmpfs of `mode` (the host's is never touched); its stdout.
fn in_shm_namespace(mode: &str, script: &str) -> Option<String> {
    let o = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o mode={mode} agentenv-test /dev/shm || exit 77\n{script}"
        ))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    if o.status.code() == Some(77) {
        support::skip(
            "a private /dev/shm",
            "cannot mount a tmpfs in a mount namespace",
        );
        return None;
    }
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// F1: a shared directory where anyone may rename anything — a root-owned
/// `/dev/shm` of mode 0777 without the sticky bit, as a Kubernetes memory
/// `emptyDir` is — is no base for the daemon's directory (nor for the
/// helper's FIFOs): a co-user could swap the directory between the hook and
/// the shell. A sticky one is (the control). Run as the victim in a
/// private mount namespace.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (agent_hook::the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn a_shared_directory_without_the_sticky_bit_is_no_base_for_the_daemon() {
    if !need_root("a /dev/shm without the sticky bit") || support::tool("unshare").is_none() {
        return;
    }
    let a = Agent::new(VICTIM, false);
    for (mode, want) in [("0777", false), ("1777", true)] {
        let script = format!(
            "setpriv --reuid {VICTIM} --regid {VICTIM} --clear-groups -- env -i HOME={home} PATH=/usr/bin:/bin \
             TMPDIR=/dev/shm AGENTENV_DAEMON_IDLE=1 {bin} hook claude daemon </dev/null\n\
             ls -A /dev/shm",
            home = a.w.p("home").display(),
            bin = a.bin.display()
        );
        let Some(out) = in_shm_namespace(mode, &script) else {
            return;
        };
        assert_eq!(out.contains("agentenv-wrap-"), want, "mode {mode}: {out}");
    }
}

/// F1, the shell's side: a rewrite naming a daemon directory that is not
/// the user's own (a co-user's, with a live fake daemon that answers
/// every request as the real one would, nonce and all, and plants code in
/// the exports) is never used: the shell checks the directory and every
/// file it opens there, and the command runs through the helper, masked.
/// Two real uids.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn the_shell_uses_no_daemon_directory_of_another_user() {
    if !need_root("a co-user's daemon directory") || !has_bash() {
        return;
    }
    let a = Agent::new(VICTIM, false);
    let fake = a.w.p("shm/agentenv-wrap-v1-fake");
    let pwned = a.w.p("shm/PWNED");
    std::fs::create_dir_all(fake.parent().unwrap()).unwrap();
    chmod(&a.w.p("shm"), 0o1777);
    let py = a.w.write(
        "fake_daemon.py",
        r#"import os, select, sys
d, pwned = sys.argv[1], sys.argv[2]
os.umask(0)
os.mkdir(d, 0o777)
ctl = {}
for i in range(8):
    s = os.path.join(d, str(i))
    os.mkdir(s, 0o777)
    for n in "coer":
        os.mkfifo(os.path.join(s, n), 0o666)
    ctl[os.open(os.path.join(s, "c"), os.O_RDWR | os.O_NONBLOCK)] = s
    os.open(os.path.join(s, "r"), os.O_RDWR)
    for n in "oe":
        os.open(os.path.join(s, n), os.O_RDWR | os.O_NONBLOCK)
print("ready", flush=True)
while True:
    for fd in select.select(list(ctl), [], [], 60)[0]:
        line = os.read(fd, 4096).decode(errors="replace")
        f = line.strip().split(" ")
        s = ctl[fd]
        nonce = f[4] if len(f) >= 7 else None
        v = os.open(os.path.join(s, "v"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        body = (": %s\n" % nonce if nonce else "") + "touch %s\n" % pwned
        os.write(v, body.encode() + b"\0")
        os.close(v)
        w = os.open(os.path.join(s, "r"), os.O_WRONLY)
        os.write(w, ("ok %s\n" % nonce if nonce else "ok\n").encode())
"#,
    );
    let mut c = Command::new(support::pinned_python());
    c.arg(&py).arg(&fake).arg(&pwned);
    let mut daemon = as_uid(ATTACKER, &c)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(daemon.stdout.take().unwrap()),
        &mut ready,
    )
    .unwrap();
    assert_eq!(ready, "ready\n");
    // The rewrite as the hook would write it with this daemon named.
    let cmd = a.rewrite("echo \"token: $GH_TOKEN\"");
    let (first, rest) = cmd.split_once('\n').unwrap();
    let cmd = format!("{first} {}:{}\n{rest}", daemon.id(), fake.display());
    let (out, err, st) = a.claude(&cmd);
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert!(!pwned.exists(), "the co-user's exports ran as the victim");
    assert_eq!(out, "token: [REDACTED:GH_TOKEN]\n", "{err}");
    assert_eq!(st, 0);
}

/// Landlock's ABI, or a visible skip.
fn landlock() -> Option<PathBuf> {
    let py = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/landlock.py");
    let o = Command::new(support::pinned_python())
        .arg(&py)
        .arg("--probe")
        .output()
        .unwrap();
    if !o.status.success() {
        support::skip("a Landlock-confined agent", "the kernel has no Landlock");
        return None;
    }
    Some(py)
}

/// F5: the daemon is no confused deputy for a confined agent (Landlock:
/// it may read everything and write only the runtime directory, where
/// the daemon's slots are, and `/dev/null`). It cannot use the daemon to
/// (a) append to a file it may only read (a descriptor opened `O_RDONLY |
/// O_APPEND` on `~/.bashrc`), (b) write into another process's pipe (its
/// stdin's read end), nor (c) run code in the user's next, unconfined
/// command by leaving `ok` and an exports file in every slot.
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (agent_hook::the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn a_confined_agent_cannot_use_the_daemon_as_a_deputy() {
    let Some(landlock) = landlock() else {
        return;
    };
    if !has_bash() {
        return;
    }
    let a = Agent::new(0, true);
    let bashrc = a.w.write("home/.bashrc", "# the user's\n");
    let pwned = a.w.p("PWNED");
    let entry = {
        let cmd = a.rewrite("true");
        cmd.lines()
            .next()
            .unwrap()
            .split(' ')
            .nth(3)
            .unwrap()
            .to_string()
    };
    // (b)'s victim: an unconfined process reading its stdin (a pipe).
    let mut reader = Command::new("sh")
        .args([
            "-c",
            "cat > \"$0\"",
            &a.w.p("reader-got").display().to_string(),
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let attack = a.w.write(
        "attack.py",
        r#"import os, sys, time
d, bashrc, reader, entry, pwned = sys.argv[1:6]
try:
    open(bashrc, "a").write("direct\n")
    print("SANDBOX-BROKEN", flush=True)
except OSError:
    pass
ro = os.open(bashrc, os.O_RDONLY | os.O_APPEND)
def ask(slot, pid, o, e, old):
    s = os.path.join(d, str(slot))
    try:
        os.close(os.open(os.path.join(s, "lock"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        return "busy"
    r = os.open(os.path.join(s, "r"), os.O_RDWR)
    c = os.open(os.path.join(s, "c"), os.O_RDWR)
    if old:
        line = "%d %d %d claude %s\n" % (pid, o, e, entry)
    else:
        line = "%d %d %d %d 12345 claude %s\n" % (pid, o, e, c, entry)
    os.write(c, line.encode())
    os.set_blocking(r, False)
    got = b""
    for _ in range(100):
        try:
            got += os.read(r, 100)
        except BlockingIOError:
            pass
        if b"\n" in got:
            break
        time.sleep(0.02)
    if got.startswith(b"ok"):
        w = os.open(os.path.join(s, "o"), os.O_WRONLY)
        os.write(c, b"o")
        os.write(w, b"echo PWNED-by-the-daemon\n")
        os.close(w)
        os.write(c, b"x")
        time.sleep(0.3)
    return got.decode(errors="replace").strip()
# (a) its own O_RDONLY|O_APPEND descriptor, (b) the reader's stdin; each in
# the request format before and after this round.
print("a-old", ask(0, os.getpid(), ro, ro, True), flush=True)
print("a-new", ask(1, os.getpid(), ro, ro, False), flush=True)
print("b-old", ask(2, int(reader), 0, 0, True), flush=True)
print("b-new", ask(3, int(reader), 0, 0, False), flush=True)
# (c) every free slot preloaded.
held = []
for i in range(8):
    s = os.path.join(d, str(i))
    try:
        r = os.open(os.path.join(s, "r"), os.O_RDWR | os.O_NONBLOCK)
        os.write(r, b"ok\n")
        held.append(r)
        v = os.open(os.path.join(s, "v"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(v, ("touch %s\n" % pwned).encode() + b"\0")
        os.close(v)
    except OSError:
        pass
print("planted", len(held), flush=True)
sys.stdin.read()
"#,
    );
    let dir = a.daemon_dir().unwrap();
    let mut confined = Command::new(support::pinned_python())
        .arg(&landlock)
        .args([
            "--rw",
            a.w.p("run").to_str().unwrap(),
            "--rw",
            "/dev/null",
            "--",
        ])
        .arg(support::pinned_python())
        .arg(&attack)
        .arg(&dir)
        .arg(&bashrc)
        .arg(reader.id().to_string())
        .arg(&entry)
        .arg(&pwned)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines =
        std::io::BufRead::lines(std::io::BufReader::new(confined.stdout.take().unwrap()));
    let mut said = Vec::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        let done = l.starts_with("planted");
        said.push(l);
        if done {
            break;
        }
    }
    assert!(
        !said.iter().any(|l| l.contains("SANDBOX-BROKEN")),
        "{said:?}"
    );
    // (c): the user's next command, unconfined.
    let (out, err, st) = a.claude(&a.rewrite("echo \"token: $GH_TOKEN\""));
    drop(confined.stdin.take());
    let _ = confined.wait();
    // The reader ends with its stdin — unless the daemon still holds a
    // write end of it (the attack worked): then it is stopped.
    drop(reader.stdin.take());
    for _ in 0..250 {
        if reader.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = reader.kill();
    let _ = reader.wait();
    assert_eq!(
        std::fs::read_to_string(&bashrc).unwrap(),
        "# the user's\n",
        "(a) the daemon wrote a file the agent may only read: {said:?}"
    );
    assert_eq!(
        std::fs::read_to_string(a.w.p("reader-got")).unwrap(),
        "",
        "(b) the daemon wrote into another process's stdin: {said:?}"
    );
    assert!(!pwned.exists(), "(c) a planted exports file ran: {said:?}");
    assert_eq!(out, "token: [REDACTED:GH_TOKEN]\n", "{err}");
    assert_eq!(st, 0);
}

/// F6: a daemon that leaves while a command runs — SIGTERM, or its binary
/// touched (an upgrade) — serves that command to its end: no hang, no
/// output lost, the command's status. Killed outright (SIGKILL, the OOM
/// killer), the command still ends (its later output has no masker left
/// and is lost, as the helper's would be). Each step waits for the
/// command or the daemon to get there (files, not sleeps).
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (agent_hook::the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn a_daemon_leaving_mid_command_never_hangs_it() {
    if !has_bash() {
        return;
    }
    for how in ["TERM", "touch", "KILL"] {
        let a = Agent::new(0, true);
        let pid = a.daemon_pid().unwrap();
        let (ready, go) = (a.w.p("READY"), a.w.p("GO"));
        let cmd = a.rewrite(&format!(
            "echo before; : > '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; echo \"after $GH_TOKEN\"; exit 3",
            ready.display(),
            go.display()
        ));
        let mut c = a.claude_cmd(&cmd);
        let child = c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let waited = |p: &Path| {
            for _ in 0..1500 {
                if p.exists() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            panic!("{how}: {} never came", p.display());
        };
        waited(&ready);
        let dir = a.daemon_dir().unwrap();
        match how {
            "touch" => {
                let f = std::fs::File::open(&a.bin).unwrap();
                f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
                    .unwrap();
            }
            sig => {
                Command::new("kill")
                    .args([&format!("-{sig}"), &pid.to_string()])
                    .status()
                    .unwrap();
            }
        }
        // The daemon has noticed (its pid file goes first) or is gone.
        for _ in 0..1000 {
            if !dir.join("pid").exists() || !Path::new(&format!("/proc/{pid}")).exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::write(&go, "").unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let cpid = child.id();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let Ok(o) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = Command::new("kill")
                .args(["-KILL", &cpid.to_string()])
                .status();
            panic!("{how}: the command hung after the daemon left");
        };
        let o = o.unwrap();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(!out.contains(TOKEN) && !err.contains(TOKEN), "{how}");
        if how == "KILL" {
            // A killed daemon relays nothing more: what it had not yet
            // written out (even "before", on a loaded machine) is lost; the
            // command still ends, and nothing leaks.
            assert!(
                "before\n".starts_with(&out) || out.starts_with("before\n"),
                "{how}: {out}"
            );
        } else {
            assert_eq!(out, "before\nafter [REDACTED:GH_TOKEN]\n", "{how}: {err}");
            assert_eq!(o.status.code(), Some(3), "{how}: {err}");
            // And then it leaves.
            for _ in 0..500 {
                if !Path::new(&format!("/proc/{pid}")).exists()
                    || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .is_ok_and(|s| s.contains(") Z "))
                {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
