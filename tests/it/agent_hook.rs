//! `agentenv hook claude|codex pre-tool-use` through the binary
//! (docs/claude-code.md#claude-code-the-session-holds-no-secret-values): the rewritten
//! command, run by bash and zsh as Claude Code runs it (`eval 'CMD' && pwd -P >|
//! FILE`), keeps the command's text, output, exit status and `cd`, has the
//! sensitive variables, and masks them; bad input is a clear error and no
//! rewrite (the client then runs the original command).

use crate::support;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const TOKEN: &str = "zqCANARY_tok_5e8f1a2b9c";
const PASSWORD: &str = "zqCANARY pw/7f3a+9b&\"q\"'s";

/// A scratch HOME with a user store (two secrets, one public variable)
/// and a project directory.
struct World {
    dir: tempfile::TempDir,
    /// Commands go through the masking daemon (else the per-command
    /// helper: `AGENTENV_NO_DAEMON=1`).
    daemon: bool,
    /// The hook and the shell run with `AGENTENV_PORTABLE=1` (docs/platforms.md),
    /// and with `mac_like` in a mount namespace whose `/dev/shm` is an
    /// empty read-only tmpfs, with no `$XDG_RUNTIME_DIR`.
    portable: bool,
    mac_like: bool,
}

/// Both ways a rewritten command is served (the portable path, docs/platforms.md,
/// has only the helper).
const MODES: &[bool] = if cfg!(agentenv_portable) {
    &[false]
} else {
    &[true, false]
};

impl World {
    /// A world whose commands go through its own masking daemon (its
    /// `$XDG_RUNTIME_DIR` is the world's), started and waited for; on the
    /// portable path, through the helper.
    fn new() -> World {
        World::with(!cfg!(agentenv_portable))
    }

    fn with(daemon: bool) -> World {
        World::build(daemon, false, false)
    }

    /// A world on the portable path, where the hook may start a daemon
    /// (no `AGENTENV_NO_DAEMON`) but must not; `mac_like`: see the field.
    fn portable(mac_like: bool) -> World {
        World::build(false, true, mac_like)
    }

    fn build(daemon: bool, portable: bool, mac_like: bool) -> World {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".agents")).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        std::fs::write(
            home.join(".agents/env"),
            format!(
                "GH_TOKEN={TOKEN}\nDB_PASSWORD='{}'\nLOG_LEVEL=debug\n",
                PASSWORD.replace('\'', "'\\''")
            ),
        )
        .unwrap();
        std::fs::write(
            home.join(".agents/agentenv.toml"),
            "[vars]\nLOG_LEVEL = { public = true }\n",
        )
        .unwrap();
        let w = World {
            dir,
            daemon,
            portable,
            mac_like,
        };
        // The session-start hook, as Claude Code runs it: the public
        // variables and the functions the rewrites call.
        let out = w
            .hook_env(&mut w.launch(support::agentenv_bin()))
            .env("CLAUDE_ENV_FILE", w.env_file())
            .current_dir(w.proj())
            .args(["hook", "claude", "session-start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, b"");
        if daemon {
            w.start_daemon();
        }
        w
    }

    /// Start the world's daemon (the hook starts it when it is not
    /// running) and wait until it serves.
    fn start_daemon(&self) {
        let ev = self.event("Bash", "true");
        for _ in 0..200 {
            if self.daemon_pid().is_some() {
                let cmd = self.rewrite("true");
                if cmd.lines().next().unwrap().split(' ').count() == 5 {
                    return;
                }
            } else {
                self.hook("claude", &ev);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the masking daemon did not start");
    }

    /// The daemon's directory (in the world's `$XDG_RUNTIME_DIR`).
    fn daemon_dir(&self) -> Option<PathBuf> {
        support::masking_daemon_dir(&self.dir.path().join("run"))
    }

    fn daemon_pid(&self) -> Option<u32> {
        support::masking_daemon_pid(&self.dir.path().join("run"))
    }

    fn kill_daemon(&self, signal: &str) {
        if let Some(pid) = self.daemon_pid() {
            let _ = Command::new("kill")
                .args([signal, &pid.to_string()])
                .status();
        }
    }
    fn hook_env<'c>(&self, c: &'c mut Command) -> &'c mut Command {
        c.env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", self.dir.path());
        self.platform_env(c);
        if !self.daemon && !self.portable {
            c.env("AGENTENV_NO_DAEMON", "1");
        }
        c
    }

    /// `AGENTENV_PORTABLE` and `XDG_RUNTIME_DIR` as the world has them.
    fn platform_env(&self, c: &mut Command) {
        if self.portable {
            c.env("AGENTENV_PORTABLE", "1");
        }
        if !self.mac_like {
            c.env("XDG_RUNTIME_DIR", self.dir.path().join("run"));
        }
    }

    /// `program`, in a mount namespace without a usable `/dev/shm` when
    /// the world is `mac_like` (an empty read-only tmpfs over it).
    fn launch(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        if !self.mac_like {
            return Command::new(program);
        }
        let mut c = Command::new("unshare");
        c.args([
            "-m",
            "--",
            "sh",
            "-c",
            "mount -t tmpfs -o ro,size=4k none /dev/shm && exec \"$@\"",
            "sh",
        ])
        .arg(program);
        c
    }

    fn env_file(&self) -> PathBuf {
        self.dir.path().join("claude-env.sh")
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// The hook with `stdin`, as the client runs it.
    fn hook(&self, client: &str, stdin: &[u8]) -> Output {
        let mut c = self.launch(support::agentenv_bin());
        self.hook_env(&mut c)
            .current_dir(self.proj())
            .args(["hook", client, "pre-tool-use"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        feed(&mut c, stdin)
    }

    fn event(&self, tool: &str, command: &str) -> Vec<u8> {
        serde_json::json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "cwd": self.proj(),
            "tool_name": tool, "tool_input": {"command": command, "description": "d"}
        })
        .to_string()
        .into_bytes()
    }

    /// The command the hook answers with for `command`.
    fn rewrite(&self, command: &str) -> String {
        let out = self.hook("claude", &self.event("Bash", command));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let hs = &v["hookSpecificOutput"];
        assert_eq!(hs["hookEventName"], "PreToolUse");
        assert!(
            hs.get("permissionDecision").is_none(),
            "no approval for Claude"
        );
        assert_eq!(hs["updatedInput"]["description"], "d", "other fields kept");
        hs["updatedInput"]["command"].as_str().unwrap().to_string()
    }

    /// `cmd` run as Claude Code runs it; (stdout, stderr, status, cwd after).
    fn run_as_claude(&self, cmd: &str, stdin: &[u8]) -> (Vec<u8>, Vec<u8>, i32, Option<String>) {
        self.run_in("bash", cmd, stdin)
    }

    /// [`World::run_as_claude`] with `shell` as the agent's shell (Claude
    /// Code runs the user's `$SHELL` when it is bash or zsh).
    fn run_in(
        &self,
        shell: &str,
        cmd: &str,
        stdin: &[u8],
    ) -> (Vec<u8>, Vec<u8>, i32, Option<String>) {
        let cwd_file = self.dir.path().join("cwd");
        let _ = std::fs::remove_file(&cwd_file);
        let q = format!("'{}'", cmd.replace('\'', "'\\''"));
        // Claude Code pastes $CLAUDE_ENV_FILE before the command.
        let env_file = std::fs::read_to_string(self.env_file()).unwrap();
        let script = format!("{env_file}\neval {q} && pwd -P >| '{}'", cwd_file.display());
        let mut c = self.launch(shell);
        c.env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", self.dir.path())
            .env("LOG_LEVEL", "debug");
        self.platform_env(&mut c);
        c.current_dir(self.proj())
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = feed(&mut c, stdin);
        let cwd = std::fs::read_to_string(&cwd_file)
            .ok()
            .map(|s| s.trim().to_string());
        (out.stdout, out.stderr, out.status.code().unwrap_or(-1), cwd)
    }
}

impl Drop for World {
    fn drop(&mut self) {
        self.kill_daemon("-TERM");
    }
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn has_bash() -> bool {
    support::tool("bash").is_some()
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn secrets_are_there_for_the_command_and_masked_in_its_output() {
    if !has_bash() {
        return;
    }
    for &daemon in MODES {
        secrets_are_there_for_the_command_and_masked_in_its_output_in(&World::with(daemon), "bash");
    }
}

fn secrets_are_there_for_the_command_and_masked_in_its_output_in(w: &World, sh: &str) {
    let cmd = w.rewrite("echo \"$GH_TOKEN\"; printf %s \"$DB_PASSWORD\" >&2; env | grep -c _tok_5e8f; printf %s \"$GH_TOKEN\" | sha256sum");
    assert!(!cmd.contains("zqCANARY"), "no value on the command line");
    let (out, err, status, _) = w.run_in(sh, &cmd, b"");
    let (out, err) = (s(&out), s(&err));
    assert_eq!(status, 0, "{err}");
    assert!(out.starts_with("[REDACTED:GH_TOKEN]\n1\n"), "{out}");
    assert_eq!(err, "[REDACTED:DB_PASSWORD]");
    // The value the command had was right.
    let want = {
        let o = Command::new("sh")
            .args(["-c", &format!("printf %s '{TOKEN}' | sha256sum")])
            .output()
            .unwrap();
        s(&o.stdout)
    };
    assert!(out.ends_with(&want), "{out}");
    assert!(!out.contains("zqCANARY") && !err.contains("zqCANARY"));
    // The helper's FIFO directory (in the world's runtime directory) is
    // gone once the command is over.
    let left: Vec<_> = std::fs::read_dir(w.dir.path().join("run"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("agentenv-cmd-"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn status_cd_stdin_and_exports_are_the_commands_own() {
    if !has_bash() {
        return;
    }
    for &daemon in MODES {
        status_cd_stdin_and_exports_are_the_commands_own_in(&World::with(daemon), "bash");
    }
}

fn status_cd_stdin_and_exports_are_the_commands_own_in(w: &World, sh: &str) {
    std::fs::create_dir_all(w.proj().join("sub")).unwrap();
    let sub = std::fs::canonicalize(w.proj().join("sub")).unwrap();
    // cd is seen by the client's `pwd -P` afterwards.
    let (_, _, st, cwd) = w.run_in(sh, &w.rewrite("cd sub && echo in"), b"");
    assert_eq!((st, cwd), (0, Some(sub.display().to_string())));
    // A failing command: its status, and no cwd written (as without agentenv).
    for (cmd, want) in [
        ("false", 1),
        ("(exit 7)", 7),
        ("echo x; exit 3", 3),
        ("kill -TERM $$", -1),
    ] {
        let (out, _, st, cwd) = w.run_in(sh, &w.rewrite(cmd), b"");
        let bare = w.run_in(sh, cmd, b"");
        assert_eq!((st, &cwd), (bare.2, &bare.3), "{cmd}: as without agentenv");
        assert_eq!(st, want, "{cmd}");
        assert_eq!(cwd, None, "{cmd}");
        if cmd.starts_with("echo x") {
            assert_eq!(s(&out), "x\n", "output before exit is out");
        }
    }
    // stdin reaches the command.
    let (out, _, _, _) = w.run_in(sh, &w.rewrite("tr a-z A-Z"), b"from stdin\n");
    assert_eq!(s(&out), "FROM STDIN\n");
    // A shell under `set -u` (the functions touch no unset variable).
    let (out, err, st, _) = w.run_in(
        sh,
        &format!("set -u\n{}", w.rewrite("echo \"${GH_TOKEN:0:2}x\"")),
        b"",
    );
    assert_eq!((s(&out), st), ("zqx\n".to_string(), 0), "{}", s(&err));
    // An export stays for the rest of the command.
    let (out, _, _, _) = w.run_in(sh, &w.rewrite("export MINE=1; echo \"mine=$MINE\""), b"");
    assert_eq!(s(&out), "mine=1\n");
    // A background job does not hold the command up (the shell exits while
    // the job still waits for a file made only after that), and its later
    // output is masked too.
    let stop = w.dir.path().join("stop");
    let cmd = w.rewrite(&format!(
        "(while [ ! -e '{}' ]; do sleep 0.02; done; echo \"late $GH_TOKEN\") & echo started",
        stop.display()
    ));
    let mut child = Command::new(sh)
        .env_clear()
        .env("HOME", w.home())
        .env("PATH", "/usr/bin:/bin")
        .env("TMPDIR", w.dir.path())
        .current_dir(w.proj())
        .args([
            "-c",
            &format!("{}\n{cmd}", std::fs::read_to_string(w.env_file()).unwrap()),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // A guard against a hang: the file appears anyway after a minute.
    let guard = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(60));
            let _ = std::fs::write(stop, "guard");
        })
    };
    let status = child.wait().unwrap();
    assert!(!stop.exists(), "the shell waited for the background job");
    assert!(status.success());
    std::fs::write(&stop, "").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut rest).unwrap();
    assert_eq!(rest, "started\nlate [REDACTED:GH_TOKEN]\n");
    drop(guard);
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn any_command_text_survives_the_rewrite() {
    if !has_bash() {
        return;
    }
    for &daemon in MODES {
        any_command_text_survives_the_rewrite_in(&World::with(daemon), "bash");
    }
}

fn any_command_text_survives_the_rewrite_in(w: &World, sh: &str) {
    let texts: Vec<String> = vec![
        "printf '%s|' 'a b' \"c'd\" $'e\\tf' \"$(printf 'g\\\\h')\" \\' '\"'; echo".into(),
        "cat <<'EOF'\nline $HOME `x` 'q' \"d\" '\\''\nEOF\ncat <<EOF2\nlevel:${LOG_LEVEL}\nEOF2"
            .into(),
        "echo \"multi\nline\"  # a comment with ' and \"".into(),
        "printf 'a\\377b\\000c\\n' | od -An -c | tr -s ' '".into(),
        "echo 'é ü 日本' && echo done".into(),
        "x='}'; echo \"$x\"; { echo brace; }".into(),
        "echo trailing backslash \\\\".into(),
        "if true; then echo then; fi; for i in 1 2; do echo $i; done".into(),
    ];
    for t in &texts {
        let bare = w.run_in(sh, t, b"");
        let wrapped = w.run_in(sh, &w.rewrite(t), b"");
        assert_eq!(s(&wrapped.0), s(&bare.0), "stdout of {t:?}");
        assert_eq!(wrapped.2, bare.2, "status of {t:?}");
    }
    // A 1 MiB command: rewritten whole (the hook's answer holds it all).
    let big = format!("echo {} | wc -c", "x".repeat(1 << 20));
    let cmd = w.rewrite(&big);
    assert!(cmd.contains(&"x".repeat(1 << 20)));
}

/// `cmd` (a rewrite) with its helper program replaced by one that does
/// not exist: only the daemon can serve it.
fn without_helper(cmd: &str) -> String {
    let (first, rest) = cmd.split_once('\n').unwrap();
    let mut words: Vec<&str> = first.split(' ').collect();
    assert_eq!(words.len(), 5, "a rewrite that names the daemon: {first}");
    words[1] = "/nonexistent/agentenv";
    format!("{}\n{rest}", words.join(" "))
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn the_daemon_serves_a_command_without_a_process_of_its_own() {
    if !has_bash() {
        return;
    }
    let w = World::new();
    std::fs::create_dir_all(w.proj().join("sub")).unwrap();
    let sub = std::fs::canonicalize(w.proj().join("sub")).unwrap();
    let cmd =
        without_helper(&w.rewrite("echo \"$GH_TOKEN\"; printf %s \"$DB_PASSWORD\" >&2; cd sub"));
    // Several at once: each gets a slot, its own values and output.
    let runs: Vec<_> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..6)
            .map(|_| sc.spawn(|| w.run_as_claude(&cmd, b"")))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // (They share the file the client's `pwd -P` writes: the cwd is
    // checked once, alone.)
    for (out, err, st, _) in runs {
        assert_eq!(s(&out), "[REDACTED:GH_TOKEN]\n", "{}", s(&err));
        assert_eq!(s(&err), "[REDACTED:DB_PASSWORD]");
        assert_eq!(st, 0);
    }
    let (_, _, st, cwd) = w.run_as_claude(&cmd, b"");
    assert_eq!((st, cwd), (0, Some(sub.display().to_string())));
    // Nothing the daemon keeps holds a value once the commands are over
    // (the exports file of a slot is removed when the shell holds it).
    let dir = w.daemon_dir().unwrap();
    let mut files = vec![dir.clone()];
    while let Some(p) = files.pop() {
        let md = std::fs::symlink_metadata(&p).unwrap();
        if md.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
        } else if md.is_file() {
            let body = std::fs::read(&p).unwrap();
            assert!(
                !s(&body).contains("zqCANARY"),
                "{} holds a value",
                p.display()
            );
            assert_ne!(p.file_name().unwrap(), "v", "an exports file left behind");
        }
    }
    // Output into a file the shell appends to (as Claude Code's task
    // output file): appended after what is there.
    let file = w.dir.path().join("task.output");
    std::fs::write(&file, "before\n").unwrap();
    let append = || {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
    };
    let env_file = std::fs::read_to_string(w.env_file()).unwrap();
    let st = Command::new("bash")
        .env_clear()
        .env("HOME", w.home())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(w.proj())
        .args(["-c", &format!("{env_file}\n{cmd}")])
        .stdout(append())
        .stderr(append())
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "before\n[REDACTED:GH_TOKEN]\n[REDACTED:DB_PASSWORD]"
    );
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn when_the_daemon_cannot_serve_the_helper_does() {
    if !has_bash() {
        return;
    }
    let w = World::new();
    let cmd = w.rewrite("echo \"$GH_TOKEN\"; printf %s \"$GH_TOKEN\" | sha256sum");
    let want_sum = {
        let o = Command::new("sh")
            .args(["-c", &format!("printf %s '{TOKEN}' | sha256sum")])
            .output()
            .unwrap();
        s(&o.stdout)
    };
    let check = |out: &[u8], err: &[u8], st: i32, why: &str| {
        assert_eq!(st, 0, "{why}: {}", s(err));
        assert_eq!(s(out), format!("[REDACTED:GH_TOKEN]\n{want_sum}"), "{why}");
        assert!(!s(err).contains("could not be loaded"), "{why}: {}", s(err));
    };
    // stdout a regular file written at an offset (the daemon would not
    // share it).
    let file = w.dir.path().join("out.txt");
    let env_file = std::fs::read_to_string(w.env_file()).unwrap();
    let st = Command::new("bash")
        .env_clear()
        .env("HOME", w.home())
        .env("PATH", "/usr/bin:/bin")
        .current_dir(w.proj())
        .args(["-c", &format!("{env_file}\n{cmd}")])
        .stdout(std::fs::File::create(&file).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    check(
        &std::fs::read(&file).unwrap(),
        b"",
        st.code().unwrap(),
        "stdout a file",
    );
    // Every slot taken.
    let dir = w.daemon_dir().unwrap();
    for i in 0..8 {
        std::fs::write(dir.join(i.to_string()).join("lock"), "").unwrap();
    }
    let (out, err, st, _) = w.run_as_claude(&cmd, b"");
    check(&out, &err, st, "every slot taken");
    for i in 0..8 {
        std::fs::remove_file(dir.join(i.to_string()).join("lock")).unwrap();
    }
    // The daemon killed outright (its slots left without a reader): no
    // hang, the helper serves; the next hook starts a new daemon.
    let pid = w.daemon_pid().unwrap();
    w.kill_daemon("-KILL");
    for _ in 0..200 {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (out, err, st, _) = w.run_as_claude(&cmd, b"");
    check(&out, &err, st, "the daemon killed");
    let _ = std::fs::remove_file(dir.join("pid"));
    w.start_daemon();
    assert_ne!(w.daemon_pid(), Some(pid), "a new daemon");
    let (out, err, st, _) = w.run_as_claude(&without_helper(&w.rewrite("echo \"$GH_TOKEN\"")), b"");
    assert_eq!(
        (s(&out), st),
        ("[REDACTED:GH_TOKEN]\n".to_string(), 0),
        "{}",
        s(&err)
    );
}

/// `f()` until it gives something or `limit` of wall time has passed
/// (a deadline, not a count of sleeps: on a loaded machine each round
/// takes longer than its sleep).
fn within<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = std::time::Instant::now() + limit;
    loop {
        let got = f();
        if got.is_some() || std::time::Instant::now() >= end {
            return got;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn the_daemon_runs_once_and_leaves_when_idle() {
    let w = World::with(false);
    let run = w.dir.path().join("run");
    let daemon = |idle: &str| {
        Command::new(support::agentenv_bin())
            .env_clear()
            .env("HOME", w.home())
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", &run)
            .env("AGENTENV_DAEMON_IDLE", idle)
            .args(["hook", "claude", "daemon"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut first = daemon("1");
    let pid = within(Duration::from_secs(20), || {
        support::masking_daemon_pid(&run)
    });
    assert_eq!(pid, Some(first.id()), "the daemon wrote its pid");
    let dir = w.daemon_dir().unwrap();
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&dir).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o700, "owner-only");
    for i in 0..8 {
        let slot = dir.join(i.to_string());
        for f in ["c", "o", "e", "r"] {
            assert!(std::fs::symlink_metadata(slot.join(f)).is_ok(), "{i}/{f}");
        }
    }
    // A second one while the first runs leaves at once, quietly.
    let second = daemon("1").wait_with_output().unwrap();
    assert!(second.status.success());
    assert_eq!((second.stdout.len(), second.stderr.len()), (0, 0));
    // Idle for its second: it takes its pid and slots away and exits.
    let status = within(Duration::from_secs(30), || first.try_wait().unwrap());
    assert!(status.is_some_and(|s| s.success()), "the idle daemon left");
    assert!(!dir.join("pid").exists());
    assert!(!dir.join("0").exists());
}

/// A daemon whose binary is replaced (an upgrade) leaves within seconds,
/// long before its idle hour, and takes its `pid` and slots with it.
#[test]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (the_portable_path_starts_no_daemon_and_the_helper_serves checks that)"
)]
fn the_daemon_leaves_when_its_binary_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let bin = dir.path().join("agentenv");
    support::copy_agentenv_bin(&bin);
    let mut daemon = Command::new(&bin)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_RUNTIME_DIR", &run)
        .env("AGENTENV_DAEMON_IDLE", "3600")
        .args(["hook", "claude", "daemon"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = within(Duration::from_secs(20), || {
        support::masking_daemon_pid(&run)
    });
    assert_eq!(pid, Some(daemon.id()), "the daemon wrote its pid");
    // The upgrade: another file renamed over the binary.
    let new = dir.path().join("agentenv.new");
    std::fs::write(&new, "#!/bin/sh\n").unwrap();
    std::fs::rename(&new, &bin).unwrap();
    let status = within(Duration::from_secs(30), || daemon.try_wait().unwrap());
    if status.is_none() {
        let _ = daemon.kill();
    }
    assert!(status.is_some_and(|s| s.success()), "the daemon left");
    assert_eq!(
        support::masking_daemon_pid(&run),
        None,
        "its pid file is gone"
    );
}

#[test]
fn bad_input_is_a_clear_error_and_no_rewrite() {
    let w = World::new();
    for (input, want) in [
        (&b"{not json"[..], "not valid JSON (line 1, column 2)"),
        (&b""[..], "not valid JSON"),
        (&b"[1, 2]"[..], "not a JSON object"),
        (&b"\xff\xfe"[..], "not valid JSON"),
    ] {
        let out = w.hook("claude", input);
        assert_eq!(out.status.code(), Some(1), "{input:?}");
        assert_eq!(
            s(&out.stdout),
            "",
            "no answer: the client runs the original"
        );
        let err = s(&out.stderr);
        assert!(err.contains(want), "{err}");
        assert!(err.contains("the tool runs unchanged"), "{err}");
    }
    // Tools it does not rewrite, and events without a command: no answer.
    for ev in [
        serde_json::json!({"tool_name": "WebFetch", "tool_input": {"url": "x"}}),
        serde_json::json!({"tool_name": "Bash", "tool_input": {}}),
        serde_json::json!({"tool_name": "Bash"}),
        serde_json::json!({"tool_name": "Read", "tool_input": {"file_path": "src/main.rs"}, "cwd": w.proj()}),
    ] {
        let out = w.hook("claude", ev.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(s(&out.stdout), "", "{ev}");
    }
}

#[test]
fn file_tools_are_denied_the_stores_with_a_reason() {
    let w = World::new();
    std::fs::create_dir_all(w.proj().join(".agents")).unwrap();
    std::os::unix::fs::symlink(w.home().join(".agents"), w.proj().join("link")).unwrap();
    let home_store = w.home().join(".agents/env").display().to_string();
    for (tool, input) in [
        ("Read", serde_json::json!({"file_path": home_store})),
        ("Read", serde_json::json!({"file_path": ".agents/env"})),
        ("Read", serde_json::json!({"file_path": "link/env"})),
        (
            "Edit",
            serde_json::json!({"file_path": "./.agents/local.env", "old_string": "a", "new_string": "b"}),
        ),
        (
            "Grep",
            serde_json::json!({"pattern": "TOKEN", "path": w.home().join(".agents")}),
        ),
        (
            "Glob",
            serde_json::json!({"pattern": "**/*", "path": ".agents"}),
        ),
    ] {
        let ev = serde_json::json!({"tool_name": tool, "tool_input": input, "cwd": w.proj()});
        let out = w.hook("claude", ev.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{tool} {input}: {}", s(&out.stdout)));
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
        let why = v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert!(
            why.contains("holds secret values") && why.contains("by name"),
            "{why}"
        );
    }
}

#[test]
fn the_default_system_store_and_tilde_spelled_roots_are_denied() {
    let w = World::new();
    let read = |extra: &[(&str, &str)], path: &str| {
        let ev = serde_json::json!({"tool_name": "Read", "tool_input": {"file_path": path}, "cwd": w.proj()});
        let mut c = Command::new(support::agentenv_bin());
        w.hook_env(&mut c)
            .envs(extra.iter().copied())
            .current_dir(w.proj())
            .args(["hook", "claude", "pre-tool-use"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = feed(&mut c, ev.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["hookSpecificOutput"]["permissionDecision"] == "deny"
    };
    assert!(read(&[], "/etc/agents/env"), "the default system store");
    let sys = w.home().join("sys/env").display().to_string();
    let mine = w.home().join("mine/env").display().to_string();
    let tilde = [("AGENTS_SYSTEM_ROOT", "~/sys"), ("AGENTS_HOME", "~/mine")];
    assert!(read(&tilde, &sys), "~/sys");
    assert!(read(&tilde, &mine), "~/mine");
    assert!(!read(&tilde, "src/main.rs"));
}

#[test]
fn a_codex_patch_touching_a_store_is_denied() {
    let w = World::new();
    let home_store = w.home().join(".agents/env").display().to_string();
    let patch = |path: &str, head: &str| {
        format!("*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** {head}: {path}\n+X=1\n*** End Patch\n")
    };
    for (path, head) in [
        (home_store.as_str(), "Add File"),
        (".agents/env", "Update File"),
        ("sub/../.agents/local.env", "Delete File"),
        (".agents/env", "Move to"),
    ] {
        let ev = serde_json::json!({
            "tool_name": "apply_patch", "cwd": w.proj(),
            "tool_input": {"command": patch(path, head)}
        });
        let out = w.hook("codex", ev.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{head} {path}: {}", s(&out.stdout)));
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecision"], "deny",
            "{head} {path}"
        );
    }
    // A patch of the project's own files runs as asked.
    let ev = serde_json::json!({
        "tool_name": "apply_patch", "cwd": w.proj(),
        "tool_input": {"command": patch("src/b.rs", "Add File")}
    });
    let out = w.hook("codex", ev.to_string().as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(s(&out.stdout), "");
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn codex_gets_its_answer_shape_and_the_public_variables() {
    if !has_bash() {
        return;
    }
    let w = World::new();
    let out = w.hook("codex", &w.event("Bash", "echo \"$LOG_LEVEL $GH_TOKEN\""));
    assert!(out.status.success(), "{}", s(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "allow");
    let cmd = v["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    // The prologue works when zsh sources it as well.
    for sh in ["bash", "zsh"] {
        if support::tool(sh).is_none() {
            continue;
        }
        let o = Command::new(sh)
            .env_clear()
            .env("HOME", w.home())
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", w.dir.path())
            .current_dir(w.proj())
            .args(["-c", cmd])
            .output()
            .unwrap();
        assert_eq!(s(&o.stdout), "debug [REDACTED:GH_TOKEN]\n", "{sh}");
    }
}

#[test]
fn nothing_sensitive_means_no_rewrite() {
    let w = World::new();
    std::fs::write(w.home().join(".agents/env"), "LOG_LEVEL=debug\n").unwrap();
    let out = w.hook("claude", &w.event("Bash", "echo hi"));
    assert_eq!(out.status.code(), Some(0), "{}", s(&out.stderr));
    assert_eq!(s(&out.stdout), "");
}

/// What planning the session had to say (here: a bad
/// `$AGENTS_ENV_TIMEOUT`) is printed once, also when the entry is made
/// (a cache miss assembles the session after the plan was printed).
#[test]
fn a_warning_of_the_plan_is_printed_once() {
    let w = World::new();
    for round in ["miss", "hit"] {
        let mut c = Command::new(support::agentenv_bin());
        w.hook_env(&mut c)
            .env("AGENTS_ENV_TIMEOUT", "soon")
            .current_dir(w.proj())
            .args(["hook", "claude", "pre-tool-use"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = feed(&mut c, &w.event("Bash", "echo hi"));
        assert_eq!(out.status.code(), Some(0), "{round}: {}", s(&out.stderr));
        let err = s(&out.stderr);
        assert_eq!(
            err.matches("ignoring $AGENTS_ENV_TIMEOUT").count(),
            1,
            "{round}: {err}"
        );
    }
}

/// The canary audit of the hooks' own output: the hook's answer (a
/// command line) and its messages at -vv hold no value; the session-start
/// hook writes only public variables, and `--export-values` warns.
#[test]
fn the_hooks_print_no_value() {
    let w = World::new();
    for client in ["claude", "codex"] {
        let mut c = Command::new(support::agentenv_bin());
        w.hook_env(&mut c)
            .current_dir(w.proj())
            .args(["-vv", "hook", client, "pre-tool-use"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(&w.event("Bash", "env"))
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        for b in [&out.stdout, &out.stderr] {
            assert!(!s(b).contains("zqCANARY"), "{client}: {}", s(b));
        }
    }
    for (args, public_only) in [
        (&["hook", "claude", "session-start"][..], true),
        (
            &["hook", "claude", "session-start", "--export-values"][..],
            false,
        ),
    ] {
        let file = w.dir.path().join("claude-env-2.sh");
        let _ = std::fs::remove_file(&file);
        let out = Command::new(support::agentenv_bin())
            .env_clear()
            .env("HOME", w.home())
            .env("PATH", "/usr/bin:/bin")
            .env("CLAUDE_ENV_FILE", &file)
            .current_dir(w.proj())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", s(&out.stderr));
        let body = std::fs::read_to_string(&file).unwrap();
        assert!(body.contains("LOG_LEVEL"), "{body}");
        assert!(body.contains("__agentenv_begin()"), "the functions");
        assert_eq!(body.contains("zqCANARY"), !public_only, "{body}");
        assert!(!s(&out.stderr).contains("zqCANARY"));
        assert!(!s(&out.stdout).contains("zqCANARY"));
        if !public_only {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(v["systemMessage"]
                .as_str()
                .unwrap()
                .contains("sensitive variables"));
            assert!(s(&out.stderr).contains("--export-values"));
        } else {
            assert_eq!(s(&out.stdout), "");
        }
    }
    // The per-command helper's failures (no pipe back to a shell; the name
    // it had before, which a session's older functions still call) name
    // the problem, never a value.
    let first = w.rewrite("true").lines().next().unwrap().to_string();
    let entry = first.split(' ').nth(3).unwrap().trim_matches('\'');
    assert!(std::path::Path::new(entry).is_file(), "{first}");
    for (event, says) in [("wrap", "masking"), ("run", "older agentenv")] {
        let out = Command::new(support::agentenv_bin())
            .env_clear()
            .env("HOME", w.home())
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", w.dir.path())
            .current_dir(w.proj())
            .args(["-vv", "hook", "claude", event, "--entry", entry])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{event}: {}", s(&out.stderr));
        assert!(s(&out.stderr).contains(says), "{event}: {}", s(&out.stderr));
        for b in [&out.stdout, &out.stderr] {
            assert!(!s(b).contains("zqCANARY"), "{event}: {}", s(b));
        }
    }
}

/// Run `c` with `stdin` written to it from a thread (so a child that
/// writes before it reads cannot deadlock) and collect its output.
fn feed(c: &mut Command, stdin: &[u8]) -> Output {
    let mut child = c.spawn().unwrap();
    let mut sin = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = sin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

fn has_zsh() -> bool {
    support::tool("zsh").is_some()
}

/// Claude Code runs the user's `$SHELL` when it is zsh: the same checks as
/// in bash, through the daemon and through the helper.
#[test]
#[cfg_attr(missing = "zsh", ignore = "needs zsh")]
fn in_zsh_secrets_are_there_for_the_command_and_masked_in_its_output() {
    if !has_zsh() {
        return;
    }
    for &daemon in MODES {
        let w = World::with(daemon);
        secrets_are_there_for_the_command_and_masked_in_its_output_in(&w, "zsh");
        if daemon {
            // Served by the daemon alone (no helper to fall back on).
            let cmd = without_helper(&w.rewrite("echo \"$GH_TOKEN\"; printenv DB_PASSWORD >&2"));
            let (out, err, st, _) = w.run_in("zsh", &cmd, b"");
            assert_eq!(
                (s(&out), s(&err), st),
                (
                    "[REDACTED:GH_TOKEN]\n".to_string(),
                    "[REDACTED:DB_PASSWORD]\n".to_string(),
                    0
                )
            );
        }
    }
}

#[test]
#[cfg_attr(missing = "zsh", ignore = "needs zsh")]
fn in_zsh_status_cd_stdin_and_exports_are_the_commands_own() {
    if !has_zsh() {
        return;
    }
    for &daemon in MODES {
        let w = World::with(daemon);
        status_cd_stdin_and_exports_are_the_commands_own_in(&w, "zsh");
        // zsh's own ways out: a subshell's `exit` (zsh runs no EXIT trap
        // there), the command's own EXIT trap (its output is
        // masked too), an EXIT trap a function sets (run when it returns).
        let r = "[REDACTED:GH_TOKEN]";
        for (cmd, want) in [
            ("x=$(exit 4); echo \"x$? $GH_TOKEN\"", format!("x4 {r}\n")),
            ("(exit 5); echo \"y$?\"; exit 6", "y5\n".into()),
            (
                // (`set -e` is off in `eval …` left of the client's `&&`.)
                "set -e; echo \"$GH_TOKEN\"; false; echo on",
                format!("{r}\non\n"),
            ),
            (
                "trap 'echo \"bye $GH_TOKEN\"' EXIT; echo hi",
                format!("hi\nbye {r}\n"),
            ),
            (
                "f() { trap 'echo \"f $GH_TOKEN\"' EXIT; }; f; echo after",
                format!("f {r}\nafter\n"),
            ),
            ("setopt localtraps; echo opt", "opt\n".into()),
        ] {
            let (out, err, st, cwd) = w.run_in("zsh", &w.rewrite(cmd), b"");
            let bare = w.run_in("zsh", cmd, b"");
            assert_eq!(s(&out), want, "{cmd}: {}", s(&err));
            assert_eq!(s(&out).replace(r, ""), s(&bare.0), "{cmd}");
            assert_eq!((st, cwd), (bare.2, bare.3), "{cmd}: as without agentenv");
        }
        // The user's options do not change the functions (nor make them
        // warn).
        let opts = "setopt warn_create_global no_clobber clobber_empty err_exit \
                    sh_word_split glob_subst ksh_arrays no_unset err_return no_global_export \
                    no_multios local_traps posix_builtins";
        let (out, err, st, _) = w.run_in(
            "zsh",
            &format!(
                "{opts}\n{}",
                w.rewrite("echo \"${GH_TOKEN:0:2}x $GH_TOKEN\"")
            ),
            b"",
        );
        assert_eq!(
            (s(&out), s(&err), st),
            (format!("zqx {r}\n"), String::new(), 0)
        );
        // The hand-back is the shell's EXIT trap, not the function's
        // (which zsh would run when `__agentenv_begin` returns).
        let (out, _, _, _) = w.run_in("zsh", &format!("{opts}\n{}", w.rewrite("trap")), b"");
        assert!(s(&out).contains("__agentenv_end EXIT"), "{}", s(&out));
        if daemon {
            // A slot is claimed by creating its `lock` exclusively, also
            // when the user lets zsh clobber empty files.
            let dir = w.daemon_dir().unwrap();
            // The slots of the commands above are made anew first (the
            // daemon removes their claims then, ours with them).
            let claimed = |i: usize| dir.join(i.to_string()).join("lock").exists();
            for _ in 0..500 {
                if !(0..8).any(claimed) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            for i in 0..8 {
                std::fs::write(dir.join(i.to_string()).join("lock"), "").unwrap();
            }
            let cmd = without_helper(&w.rewrite("echo \"[${GH_TOKEN-}]\""));
            let (out, err, _, _) = w.run_in("zsh", &format!("{opts}\n{cmd}"), b"");
            assert_eq!(s(&out), "[]\n", "{}", s(&err));
            assert!(s(&err).contains("could not be loaded"), "{}", s(&err));
            for i in 0..8 {
                std::fs::remove_file(dir.join(i.to_string()).join("lock")).unwrap();
            }
        }
    }
}

#[test]
#[cfg_attr(missing = "zsh", ignore = "needs zsh")]
fn in_zsh_any_command_text_survives_the_rewrite() {
    if !has_zsh() {
        return;
    }
    for &daemon in MODES {
        any_command_text_survives_the_rewrite_in(&World::with(daemon), "zsh");
    }
}

/// A shell that is neither bash nor zsh (dash, as `sh`) parses the
/// functions, runs the command without the sensitive variables and says
/// so; nothing leaks, its status and `cd` stay its own.
#[test]
#[cfg_attr(missing = "dash", ignore = "needs dash")]
fn a_shell_other_than_bash_or_zsh_runs_the_command_without_the_values() {
    if support::tool("dash").is_none() {
        return;
    }
    let w = World::new();
    let cmd = w.rewrite(
        "echo \"[$GH_TOKEN]\"; printenv DB_PASSWORD; echo \"e$DB_PASSWORD\" >&2; cd /; exit 3",
    );
    let (out, err, status, _) = w.run_in("dash", &cmd, b"");
    let (out, err) = (s(&out), s(&err));
    assert!(
        !out.contains("zqCANARY") && !err.contains("zqCANARY"),
        "{out}{err}"
    );
    assert_eq!(status, 3, "{err}");
    assert_eq!(out, "[]\n", "{err}");
    assert!(err.contains("the shell is not bash or zsh"), "{err}");
    assert!(err.ends_with("e\n"), "{err}");
    // The next command (`eval … && pwd`) sees the cd.
    let (_, _, status, cwd) = w.run_in("dash", &w.rewrite("cd /"), b"");
    assert_eq!((status, cwd.as_deref()), (0, Some("/")));
}

/// A store variable whose name zsh keeps for itself (read-only `ARGC`
/// would end the exports there, `USERNAME` change the shell's user, `path`
/// set `PATH`) is not set in zsh, with a message naming it; the others
/// are. bash sets them as before.
#[test]
#[cfg_attr(any(missing = "zsh", missing = "bash"), ignore = "needs zsh and bash")]
fn in_zsh_a_name_zsh_keeps_for_itself_is_not_set() {
    if !has_zsh() || !has_bash() {
        return;
    }
    for &daemon in MODES {
        let w = World::with(daemon);
        let env = w.home().join(".agents/env");
        let mut text = std::fs::read_to_string(&env).unwrap();
        text.push_str(
            "ARGC=zqCANARY_argc_9\nUSERNAME=nobody-zq-77\npath=/nowhere/zq\nZZ_LAST=zqCANARY_last_77\n",
        );
        std::fs::write(&env, text).unwrap();
        let cmd = "id -un; echo \"$GH_TOKEN $ZZ_LAST\"; printenv PATH USERNAME";
        let bare = w.run_in("zsh", cmd, b"");
        let (out, err, st, _) = w.run_in("zsh", &w.rewrite(cmd), b"");
        let (out, err) = (s(&out), s(&err));
        assert_eq!(st, bare.2, "{err}");
        assert_eq!(
            out,
            s(&bare.0).replace("\n \n", "\n[REDACTED:GH_TOKEN] [REDACTED:ZZ_LAST]\n"),
            "{err}"
        );
        for name in ["ARGC", "USERNAME", "path"] {
            assert!(
                err.contains(&format!("zsh keeps {name} for itself")),
                "{err}"
            );
        }
        assert!(!out.contains("zqCANARY") && !err.contains("zqCANARY"));
        // bash: exported as any other.
        let (out, _, _, _) = w.run_in("bash", &w.rewrite("printenv ARGC USERNAME path"), b"");
        assert_eq!(
            s(&out),
            "[REDACTED:ARGC]\n[REDACTED:USERNAME]\n[REDACTED:path]\n",
            "{daemon}"
        );
    }
}

/// The first line of a rewrite names a daemon (`PID:DIR`, a fifth word).
fn names_a_daemon(cmd: &str) -> bool {
    cmd.lines().next().unwrap().split(' ').count() == 5
}

/// docs/platforms.md: on the portable path (`AGENTENV_PORTABLE=1`, what a Mac
/// runs) the hook starts no masking daemon and names none, though it is
/// free to (no `AGENTENV_NO_DAEMON`): every command goes through the
/// per-command helper, which needs no `/proc`, and works as on Linux.
/// Without the variable the same world gets a daemon (the other tests).
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn the_portable_path_starts_no_daemon_and_the_helper_serves() {
    if !has_bash() {
        return;
    }
    let w = World::portable(false);
    for _ in 0..3 {
        let cmd = w.rewrite("true");
        assert!(!names_a_daemon(&cmd), "{cmd}");
    }
    // A daemon the hook started would have made its directory by now.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(w.daemon_dir(), None, "no daemon on the portable path");
    secrets_are_there_for_the_command_and_masked_in_its_output_in(&w, "bash");
    status_cd_stdin_and_exports_are_the_commands_own_in(&w, "bash");
    assert_eq!(w.daemon_dir(), None);
}

/// The issue's "done when": with `AGENTENV_PORTABLE=1`, no usable
/// `/dev/shm` (an empty read-only tmpfs over it, in a mount namespace) and
/// no `$XDG_RUNTIME_DIR` — a Mac's world, its per-user owner-only
/// `$TMPDIR` the only place for FIFOs — the session-start hook and a
/// rewritten command work as on Linux: the command has its secrets, its
/// output is masked, its exit status and `cd` are kept; the helper's
/// directory in `$TMPDIR` is gone afterwards.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root (a mount namespace)")]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn without_dev_shm_on_the_portable_path_a_command_works_as_on_linux() {
    if !has_bash() {
        return;
    }
    if !rustix::process::geteuid().is_root() {
        support::skip("root", "a mount namespace needs root");
        return;
    }
    let Some(_) = support::tool("unshare") else {
        return;
    };
    for sh in ["bash", "zsh"] {
        if sh == "zsh" && !has_zsh() {
            continue;
        }
        let w = World::portable(true);
        // The namespace really has no usable /dev/shm.
        let probe = w
            .launch("sh")
            .args([
                "-c",
                "mkdir /dev/shm/x 2>/dev/null && echo made; ls -A /dev/shm | wc -l",
            ])
            .output()
            .unwrap();
        assert_eq!(s(&probe.stdout).trim(), "0", "{}", s(&probe.stderr));
        let cmd = w.rewrite("true");
        assert!(!names_a_daemon(&cmd), "{cmd}");
        secrets_are_there_for_the_command_and_masked_in_its_output_in(&w, sh);
        status_cd_stdin_and_exports_are_the_commands_own_in(&w, sh);
        let left: Vec<_> = std::fs::read_dir(w.dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("agentenv-"))
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}

/// Masked or not, through the agent's hook: a command's JSON with the
/// store's ordinary values (`true`, `3000`) passes untouched and stays
/// JSON; the token is masked; neither ordinary value is in the session's
/// environment file (they stay sensitive).
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn ordinary_values_pass_the_hooks_masker_untouched() {
    if !has_bash() {
        return;
    }
    for &daemon in MODES {
        let w = World::with(daemon);
        std::fs::write(
            w.home().join(".agents/env"),
            format!("GH_TOKEN={TOKEN}\nFEATURE_ENABLED=true\nTIMEOUT=3000\n"),
        )
        .unwrap();
        let cmd = w.rewrite(
            r#"printf '{"ok":%s,"timeout":%s,"t":"%s"}\n' "$FEATURE_ENABLED" "$TIMEOUT" "$GH_TOKEN""#,
        );
        let (out, err, status, _) = w.run_in("bash", &cmd, b"");
        assert_eq!(status, 0, "{}", s(&err));
        assert_eq!(
            s(&out),
            "{\"ok\":true,\"timeout\":3000,\"t\":\"[REDACTED:GH_TOKEN]\"}\n"
        );
        serde_json::from_slice::<serde_json::Value>(&out).unwrap();
    }
}
