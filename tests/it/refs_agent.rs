//! Secret references in an agent's wrapped commands
//! (docs/team-secrets.md#what-never-touches-the-disk), against OpenBao's real server (`bao server -dev`, its audit
//! log counting the reads): an `init claude` hook's rewritten command gets
//! the referenced values — through the masking daemon (which takes them
//! only from the value daemon) and through the portable path's helper —
//! while the cache entry holds the reference and the value daemon's key,
//! never the value. A value daemon gone (or a TTL over) makes the helper
//! resolve again; a stopped server warns and the rest loads; an unallowed
//! project contacts no backend. Each test skips visibly without `bao`.

use crate::refs::{files_holding, Bao};
use crate::support;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

const DB_PW: &str = "db-pw-canary-agent-9a7e55";
const API: &str = "api-tok-canary-agent-3c1d07";
const GH: &str = "gh-plain-canary-agent-77b2e1";

/// A HOME whose user store references two OpenBao secrets and sets one
/// plain one, a project directory, and its own runtime directory (or,
/// `portable`, none: the value daemon then lives in `$TMPDIR`).
struct World {
    dir: tempfile::TempDir,
    portable: bool,
    bao: Vec<(&'static str, String)>,
}

impl World {
    fn new(bao: &Bao, portable: bool) -> World {
        World::with_env(bao, portable, &[])
    }

    /// [`World::new`] with `extra` in the hooks' and the shell's
    /// environment.
    fn with_env(bao: &Bao, portable: bool, extra: &[(&'static str, &str)]) -> World {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        for d in ["run", "home/.agents", "proj", "state"] {
            std::fs::create_dir_all(p.join(d)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p.join("run"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(
            p.join("home/.agents/agentenv.toml"),
            "[vars]\n\
             DB_PASSWORD = { from = \"vault://secret/app/db#password\" }\n\
             API_TOKEN = { from = \"vault://secret/app/api#token\" }\n\
             LOG_LEVEL = { public = true }\n",
        )
        .unwrap();
        std::fs::write(
            p.join("home/.agents/env"),
            format!("GH_TOKEN={GH}\nLOG_LEVEL=debug\n"),
        )
        .unwrap();
        let w = World {
            dir,
            portable,
            bao: [
                ("BAO_ADDR", bao.addr.clone()),
                ("BAO_TOKEN", bao.token.clone()),
            ]
            .into_iter()
            .chain(extra.iter().map(|(k, v)| (*k, v.to_string())))
            .collect(),
        };
        let out = w
            .env(&mut Command::new(support::agentenv_bin()))
            .env("CLAUDE_ENV_FILE", w.path("claude-env.sh"))
            .current_dir(w.path("proj"))
            .args(["hook", "claude", "session-start"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", s(&out.stderr));
        w
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// The environment the client gives its hooks and its shell.
    fn env<'c>(&self, c: &'c mut Command) -> &'c mut Command {
        c.env_clear()
            .env("HOME", self.path("home"))
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", self.dir.path())
            .env("XDG_STATE_HOME", self.path("state"))
            .env("AGENTS_SYSTEM_ROOT", self.path("no-system"))
            .env("LOG_LEVEL", "debug")
            .envs(self.bao.iter().map(|(k, v)| (k, v)));
        if self.portable {
            c.env("AGENTENV_PORTABLE", "1");
        } else {
            c.env("XDG_RUNTIME_DIR", self.path("run"));
        }
        c
    }

    /// The value daemon's directory.
    fn values_dir(&self) -> PathBuf {
        let uid = rustix::process::geteuid().as_raw();
        let base = if self.portable {
            self.dir.path().to_path_buf()
        } else {
            self.path("run")
        };
        base.join(format!("agentenv-refs-v1-{uid}"))
    }

    /// The value daemon gone: its socket removed (it leaves within a
    /// second), and waited for (its lock free).
    fn stop_value_daemon(&self) {
        let d = self.values_dir();
        let _ = std::fs::remove_file(d.join("sock"));
        let Ok(lock) = std::fs::OpenOptions::new().write(true).open(d.join("lock")) else {
            return;
        };
        let until = Instant::now() + Duration::from_secs(10);
        use rustix::fs::{flock, FlockOperation};
        while flock(&lock, FlockOperation::NonBlockingLockExclusive).is_err() {
            assert!(Instant::now() < until, "the value daemon did not leave");
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = flock(&lock, FlockOperation::Unlock);
    }

    fn masking_daemon_pid(&self) -> Option<u32> {
        support::masking_daemon_pid(&self.path("run"))
    }

    /// The hook's answer for a Bash command: the rewritten command (and
    /// the hook's stderr).
    fn rewrite(&self, command: &str) -> (String, String) {
        let ev = serde_json::json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "cwd": self.path("proj"),
            "tool_name": "Bash", "tool_input": {"command": command, "description": "d"}
        })
        .to_string();
        let mut c = Command::new(support::agentenv_bin());
        self.env(&mut c)
            .current_dir(self.path("proj"))
            .args(["hook", "claude", "pre-tool-use"]);
        let out = feed(&mut c, ev.as_bytes());
        assert!(out.status.success(), "{}", s(&out.stderr));
        if out.stdout.is_empty() {
            return (command.to_string(), s(&out.stderr));
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let cmd = v["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap()
            .to_string();
        (cmd, s(&out.stderr))
    }

    /// `cmd` run as Claude Code runs it: (stdout, stderr, status).
    fn run(&self, cmd: &str) -> (String, String, i32) {
        let env_file = std::fs::read_to_string(self.path("claude-env.sh")).unwrap();
        let q = format!("'{}'", cmd.replace('\'', "'\\''"));
        let mut c = Command::new("bash");
        self.env(&mut c)
            .current_dir(self.path("proj"))
            .args(["-c", &format!("{env_file}\neval {q}")]);
        let out = feed(&mut c, b"");
        (
            s(&out.stdout),
            s(&out.stderr),
            out.status.code().unwrap_or(-1),
        )
    }

    /// The masking daemon started (the hook starts it) and serving.
    fn start_masking_daemon(&self) {
        for _ in 0..200 {
            if names_a_daemon(&self.rewrite("true").0) && self.masking_daemon_pid().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the masking daemon did not start");
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if let Some(pid) = self.masking_daemon_pid() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status();
        }
        let _ = std::fs::remove_file(self.values_dir().join("sock"));
    }
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn feed(c: &mut Command, stdin: &[u8]) -> Output {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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

fn names_a_daemon(cmd: &str) -> bool {
    cmd.lines().next().unwrap_or("").split(' ').count() == 5
}

/// `cmd` (a rewrite naming the masking daemon) with its helper replaced
/// by one that does not exist: only the masking daemon can serve it.
fn without_helper(cmd: &str) -> String {
    let (first, rest) = cmd.split_once('\n').unwrap();
    let mut words: Vec<&str> = first.split(' ').collect();
    assert_eq!(words.len(), 5, "a rewrite that names the daemon: {first}");
    words[1] = "/nonexistent/agentenv";
    format!("{}\n{rest}", words.join(" "))
}

fn sha256(text: &str) -> String {
    let o = Command::new("sh")
        .args(["-c", "printf %s \"$1\" | sha256sum", "sh", text])
        .output()
        .unwrap();
    s(&o.stdout)
}

/// bash, and the server with the two secrets in a scratch directory
/// (the server stops before the directory goes); `None` (a visible skip)
/// when either is missing.
fn bash_and_server() -> Option<(tempfile::TempDir, Bao)> {
    support::tool("bash")?;
    let root = tempfile::tempdir().unwrap();
    let b = Bao::start(&root.path().join("bao"))?;
    b.put("secret/app/db", &[("password", DB_PW)]);
    b.put("secret/app/api", &[("token", API)]);
    Some((root, b))
}

/// The command every run below uses, and what it prints when it had the
/// three values (their digest: the values were right; then each masked).
const PRINT: &str = "printf '%s|%s|%s' \"$DB_PASSWORD\" \"$API_TOKEN\" \"$GH_TOKEN\" | sha256sum; echo \"$DB_PASSWORD\"; printf %s \"$API_TOKEN\" >&2";

fn check_served(out: &(String, String, i32), why: &str) {
    let (o, e, st) = out;
    assert_eq!(*st, 0, "{why}: {e}");
    assert_eq!(
        *o,
        format!(
            "{}[REDACTED:DB_PASSWORD]\n",
            sha256(&format!("{DB_PW}|{API}|{GH}"))
        ),
        "{why}: {e}"
    );
    assert_eq!(e, "[REDACTED:API_TOKEN]", "{why}");
}

fn served_through(portable: bool) {
    let started = SystemTime::now() - Duration::from_secs(1);
    let Some((root, b)) = bash_and_server() else {
        return;
    };
    let w = World::new(&b, portable);
    let reads = || (b.reads("app/db"), b.reads("app/api"));
    if !portable {
        w.start_masking_daemon();
    }
    // Cold: the hook resolves (one read per path) and the value daemon
    // gets the values; the entry holds none of them.
    let (cmd, hook_err) = w.rewrite(PRINT);
    assert!(!cmd.contains("canary"), "no value on the command line");
    assert!(
        !hook_err.contains("canary") && !hook_err.contains(&b.token),
        "{hook_err}"
    );
    assert!(!hook_err.contains("run without"), "{hook_err}");
    assert_eq!(names_a_daemon(&cmd), !portable, "{cmd}");
    check_served(&w.run(&cmd), "cold");
    assert_eq!(reads(), (1, 1));
    // Within the TTL: no backend call, command after command.
    for _ in 0..2 {
        let (cmd, _) = w.rewrite(PRINT);
        check_served(&w.run(&cmd), "warm");
    }
    if !portable {
        // The masking daemon serves it alone (no helper to fall back on).
        let (cmd, _) = w.rewrite(PRINT);
        check_served(&w.run(&without_helper(&cmd)), "the masking daemon");
    }
    assert_eq!(reads(), (1, 1));
    // The value daemon gone: the masking daemon has no value to give (it
    // never resolves one itself) …
    w.stop_value_daemon();
    if !portable {
        let (cmd, _) = w.rewrite(PRINT);
        let (o, e, _) = w.run(&without_helper(&cmd));
        assert!(!o.contains("[REDACTED:DB_PASSWORD]"), "{o}");
        assert!(e.contains("could not be loaded"), "{e}");
        assert_eq!(reads(), (1, 1), "the masking daemon resolved a reference");
        // It started the value daemon again (the hook, on a cache hit,
        // resolved nothing; no helper ran).
        let sock = w.values_dir().join("sock");
        let until = Instant::now() + Duration::from_secs(5);
        while !sock.exists() {
            assert!(
                Instant::now() < until,
                "the masking daemon did not start the value daemon"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // … and the helper resolves again: one more read per path, then the
    // value daemon holds them again.
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "the value daemon gone");
    assert_eq!(reads(), (2, 2));
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "the value daemon back");
    if !portable {
        let (cmd, _) = w.rewrite(PRINT);
        check_served(&w.run(&without_helper(&cmd)), "the masking daemon again");
    }
    assert_eq!(reads(), (2, 2));
    assert!(
        w.values_dir().join("sock").exists(),
        "the value daemon's place"
    );
    // env and exec get them from the value daemon too.
    let mut c = Command::new(support::agentenv_bin());
    w.env(&mut c).current_dir(w.path("proj")).args([
        "exec",
        "--",
        "sh",
        "-c",
        "printf %s \"$DB_PASSWORD\"",
    ]);
    let out = feed(&mut c, b"");
    assert_eq!(s(&out.stdout), DB_PW, "{}", s(&out.stderr));
    let mut c = Command::new(support::agentenv_bin());
    w.env(&mut c).current_dir(w.path("proj")).arg("env");
    let out = feed(&mut c, b"");
    assert!(s(&out.stdout).contains(API), "{}", s(&out.stderr));
    assert_eq!(reads(), (2, 2));
    // No file anywhere holds a referenced value, raw or base64: HOME (the
    // stores, the cache entry), state, the runtime and temp directories,
    // /tmp, /dev/shm.
    let dirs = [
        w.dir.path().to_path_buf(),
        PathBuf::from("/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    let found: Vec<String> = files_holding(&dirs, started, &[DB_PW, API])
        .into_iter()
        .filter(|f| !f.starts_with(&root.path().display().to_string()))
        .collect();
    assert!(
        found.is_empty(),
        "files holding a referenced value: {found:?}"
    );
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
#[cfg_attr(
    agentenv_portable,
    ignore = "no masking daemon on the portable path (a_wrapped_command_gets_referenced_values_on_the_portable_path)"
)]
fn a_wrapped_command_gets_referenced_values_through_the_masking_daemon() {
    served_through(false);
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn a_wrapped_command_gets_referenced_values_on_the_portable_path() {
    served_through(true);
}

/// `AGENTENV_REF_TTL` over: the value daemon no longer gives the value
/// (the masking daemon then answers `no`), and the helper reads the
/// backend again — once, the next command is within the new TTL.
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn a_ttl_over_resolves_again_once() {
    let Some((_root, b)) = bash_and_server() else {
        return;
    };
    let w = World::with_env(&b, cfg!(agentenv_portable), &[("AGENTENV_REF_TTL", "8")]);
    let reads = || (b.reads("app/db"), b.reads("app/api"));
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "cold");
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "within the TTL");
    assert_eq!(reads(), (1, 1));
    std::thread::sleep(Duration::from_millis(8500));
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "the TTL over");
    assert_eq!(reads(), (2, 2));
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "within the new TTL");
    assert_eq!(reads(), (2, 2));
    drop(w);
    // A TTL of 0 keeps nothing: each command resolves again (after the
    // session-start hook's read and the cold hook's; the hook's entry, on
    // a cache hit, resolves nothing).
    let w = World::with_env(&b, cfg!(agentenv_portable), &[("AGENTENV_REF_TTL", "0")]);
    assert_eq!(reads(), (3, 3));
    for n in [5, 6] {
        let (cmd, _) = w.rewrite(PRINT);
        check_served(&w.run(&cmd), "a TTL of 0");
        assert_eq!(reads(), (n, n));
    }
    assert!(
        !w.values_dir().join("sock").exists(),
        "a value daemon with a TTL of 0"
    );
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn a_stopped_server_warns_per_reference_and_the_rest_loads() {
    let Some((_root, mut b)) = bash_and_server() else {
        return;
    };
    let w = World::new(&b, cfg!(agentenv_portable));
    let (cmd, _) = w.rewrite(PRINT);
    check_served(&w.run(&cmd), "cold");
    b.stop();
    w.stop_value_daemon();
    let (cmd, hook_err) =
        w.rewrite("echo \"$GH_TOKEN\"; echo \"db=${DB_PASSWORD:-unset} api=${API_TOKEN:-unset}\"");
    let (o, e, st) = w.run(&cmd);
    assert_eq!(st, 0, "{e}");
    assert_eq!(o, "[REDACTED:GH_TOKEN]\ndb=unset api=unset\n", "{e}");
    for want in [
        "DB_PASSWORD: reference vault://secret/app/db#password not resolved: cannot",
        "API_TOKEN: reference vault://secret/app/api#token not resolved: cannot",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
    for text in [&o, &e, &hook_err, &cmd] {
        assert!(!text.contains(&b.token), "the token in an output: {text}");
        assert!(
            !text.contains("canary-agent"),
            "a value in an output: {text}"
        );
    }
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn an_unallowed_projects_references_contact_no_backend() {
    let Some((_root, b)) = bash_and_server() else {
        return;
    };
    b.put("secret/proj/x", &[("k", DB_PW)]);
    let w = World::new(&b, cfg!(agentenv_portable));
    std::fs::create_dir_all(w.path("proj/.agents")).unwrap();
    std::fs::write(
        w.path("proj/.agents/agentenv.toml"),
        "[vars]\nPROJ_SECRET = { from = \"vault://secret/proj/x#k\" }\n",
    )
    .unwrap();
    std::fs::write(w.path("proj/.agents/env"), "PROJ_PLAIN=p\n").unwrap();
    for _ in 0..2 {
        let (cmd, hook_err) = w.rewrite("echo \"p=${PROJ_SECRET:-unset} gh=${#GH_TOKEN}\"");
        let (o, e, st) = w.run(&cmd);
        assert_eq!(st, 0, "{e}");
        assert_eq!(o, format!("p=unset gh={}\n", GH.len()), "{hook_err}{e}");
        assert!(!e.contains(DB_PW) && !hook_err.contains(DB_PW));
    }
    assert_eq!(
        b.reads("proj/x"),
        0,
        "an unallowed project contacted the backend"
    );
    // Allowed: its reference resolves, once; and its own file's API_TOKEN
    // (a layer after the user store's reference) is the command's.
    std::fs::write(
        w.path("proj/.agents/env"),
        "PROJ_PLAIN=p\nAPI_TOKEN=plain-override-value\n",
    )
    .unwrap();
    let mut c = Command::new(support::agentenv_bin());
    w.env(&mut c).current_dir(w.path("proj")).arg("allow");
    let out = feed(&mut c, b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    for _ in 0..2 {
        let (cmd, _) = w.rewrite("printf '%s|%s' \"$PROJ_SECRET\" \"$API_TOKEN\" | sha256sum");
        let (o, e, st) = w.run(&cmd);
        assert_eq!(st, 0, "{e}");
        assert_eq!(o, sha256(&format!("{DB_PW}|plain-override-value")), "{e}");
    }
    assert_eq!(b.reads("proj/x"), 1);
}

/// A later layer that builds a variable from a referenced value
/// (`DSN="…${DB_PASSWORD}…"` in the project store) holds that value too:
/// the entry keeps its name only, and each command takes it from the
/// session assembled again — no file holds it, no backend is read within
/// the TTL, and the output is masked of it.
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn a_variable_built_from_a_referenced_value_stays_out_of_the_entry() {
    let started = SystemTime::now() - Duration::from_secs(1);
    let Some((root, b)) = bash_and_server() else {
        return;
    };
    let w = World::new(&b, cfg!(agentenv_portable));
    std::fs::create_dir_all(w.path("proj/.agents")).unwrap();
    std::fs::write(
        w.path("proj/.agents/env"),
        "DSN=\"pg://app:${DB_PASSWORD}@db/x\"\n",
    )
    .unwrap();
    let mut c = Command::new(support::agentenv_bin());
    w.env(&mut c).current_dir(w.path("proj")).arg("allow");
    let out = feed(&mut c, b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    let dsn = format!("pg://app:{DB_PW}@db/x");
    for round in 0..3 {
        let (cmd, hook_err) = w.rewrite("printf %s \"$DSN\" | sha256sum; echo \"$DSN\"");
        assert!(!cmd.contains(DB_PW), "no value on the command line");
        let (o, e, st) = w.run(&cmd);
        assert_eq!(st, 0, "{hook_err}{e}");
        assert_eq!(
            o,
            format!("{}[REDACTED:DSN]\n", sha256(&dsn)),
            "round {round}: {hook_err}{e}"
        );
        assert!(!e.contains(DB_PW) && !hook_err.contains(DB_PW), "{e}");
    }
    assert_eq!(b.reads("app/db"), 1, "within the TTL: no backend read");
    let dirs = [
        w.dir.path().to_path_buf(),
        PathBuf::from("/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    let found: Vec<String> = files_holding(&dirs, started, &[DB_PW, &dsn])
        .into_iter()
        .filter(|f| !f.starts_with(&root.path().display().to_string()))
        .collect();
    assert!(
        found.is_empty(),
        "files holding a referenced value: {found:?}"
    );
}
