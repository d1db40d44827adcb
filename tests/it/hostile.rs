//! Hostile inputs, through the binary: every case must end within a bound,
//! with a clear outcome (exit code + a message naming the file or the
//! variable, never a value), in bounded memory, and must never destroy a
//! file. See docs/harden.md for the limits these tests pin.

use crate::support;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::Tree;

/// Issue 22's value-file, hook, overlay and env.py items (the trust items
/// are below in this file).
#[path = "hostile/hook_and_writers.rs"]
mod hook_and_writers;

/// Issue 31 (hardening round 4): the masking daemon and the agent hooks
/// against a co-user and a hostile agent; `set`, `audit`.
#[path = "hostile/round4.rs"]
mod round4;

/// A value planted in hostile files; it must never reach stderr.
const CANARY: &str = "hostileCANARY93";

/// The session tree (`support::Tree::session`): `home/` (user store
/// `home/.agents`), `proj/` (the cwd, project store `proj/.agents`), no
/// system store; plus the special files hostile cases need.
struct W {
    t: Tree,
    root: PathBuf,
}

struct Out {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    elapsed: Duration,
    /// Peak resident set (KiB) of the agentenv process, from /proc VmHWM.
    hwm_kib: u64,
}

impl Out {
    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.stdout)
            )
        })
    }
    fn no_canary(&self) -> &Self {
        assert!(
            !self.stderr.contains(CANARY),
            "stderr leaks: {}",
            self.stderr
        );
        self
    }
}

impl W {
    fn new() -> W {
        let t = Tree::session().dir("home/.agents");
        let root = t.root().to_path_buf();
        W { t, root }
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.t.path(rel)
    }
    fn write(&self, rel: &str, body: impl AsRef<[u8]>) -> PathBuf {
        self.t.write(rel, body)
    }
    fn fifo(&self, rel: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        assert!(Command::new("mkfifo").arg(&p).status().unwrap().success());
        p
    }
    fn socket(&self, rel: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        // The listener is dropped, the socket file stays.
        std::os::unix::net::UnixListener::bind(&p).unwrap();
        p
    }
    fn link(&self, target: impl AsRef<Path>, rel: &str) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, &p).unwrap();
        p
    }
    /// A sparse file of `len` NUL bytes.
    fn sparse(&self, rel: &str, len: u64) -> PathBuf {
        let p = self.p(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::File::create(&p).unwrap().set_len(len).unwrap();
        p
    }
    /// The session environment of `support::session_cmd`.
    fn base_env(&self) -> Vec<(OsString, OsString)> {
        support::session_cmd(&self.root)
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
            .collect()
    }
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = support::session_cmd(&self.root);
        c.args(args).stdin(Stdio::null());
        c
    }
    fn env(&self, extra: &[&str]) -> Out {
        let mut a = vec!["env", "--format", "json", "--diff"];
        a.extend_from_slice(extra);
        run(self.cmd(&a), 60)
    }
}

/// Run with a hard wall-clock bound (a hang fails the test instead of
/// hanging it), sampling the child's VmHWM.
fn run(mut c: Command, limit_secs: u64) -> Out {
    let start = Instant::now();
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut b).ok();
        b
    });
    let t2 = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut b).ok();
        b
    });
    let status_path = format!("/proc/{}/status", child.id());
    let mut hwm = 0u64;
    let status = loop {
        if let Ok(s) = std::fs::read_to_string(&status_path) {
            if let Some(l) = s.lines().find(|l| l.starts_with("VmHWM:")) {
                let kib: u64 = l
                    .split_whitespace()
                    .nth(1)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                hwm = hwm.max(kib);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(limit_secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "agentenv {:?} did not finish within {limit_secs} s",
                c.get_args().collect::<Vec<_>>()
            );
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = start.elapsed();
    Out {
        code: status.code(),
        stdout: t1.join().unwrap(),
        stderr: String::from_utf8_lossy(&t2.join().unwrap()).into_owned(),
        elapsed,
        hwm_kib: hwm,
    }
}

// ---------------------------------------------------------------------------
// FIFO, socket, device where an env file is expected

#[test]
fn session_store_files_that_are_fifos_sockets_or_devices_are_skipped() {
    let w = W::new();
    w.fifo("home/.agents/env");
    w.fifo("home/.agents/env.py");
    w.socket("home/.agents/pre.env");
    w.link("/dev/zero", "home/.agents/local.env");
    w.link("/dev/zero", "proj/.agents/env.py");
    w.fifo("proj/.agents/env");
    w.write("proj/.agents/pre.local.env", format!("OK=1\nS={CANARY}\n"));
    let o = w.env(&["--timeout", "5"]);
    o.no_canary();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let j = o.json();
    assert_eq!(j["OK"], "1", "the regular file still applies");
    assert!(o.elapsed < Duration::from_secs(20));
}

#[test]
fn operator_env_files_that_are_fifos_sockets_or_devices_are_unreadable() {
    let w = W::new();
    let fifo = w.fifo("plug/fifo.env");
    let sock = w.socket("plug/sock.env");
    w.write("plug/ok.env", format!("OK=1\nS={CANARY}\n"));
    let list = format!(
        "{}:{}:/dev/zero:/dev/null:{}",
        fifo.display(),
        sock.display(),
        w.p("plug/ok.env").display()
    );
    let report = w.p("report.json");
    let mut c = w.cmd(&[
        "launch",
        "--report",
        report.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo \"$OK\"",
    ]);
    c.env("AGENT_BUNDLE_ENV_FILE", &list);
    let o = run(c, 60);
    o.no_canary();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, b"1\n");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let states: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["state"].as_str().unwrap())
        .collect();
    // A FIFO nobody writes waits at most the pipe timeout; /dev/null is a
    // device too.
    assert_eq!(
        states,
        [
            "unreadable",
            "unreadable",
            "unreadable",
            "unreadable",
            "loaded"
        ]
    );
    assert!(o.stderr.contains("fifo.env"), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(20));
}

#[test]
fn harness_env_file_fifo_socket_device_are_clear_errors() {
    let w = W::new();
    let h = w.write(
        "fs/harness/h.yaml",
        "agent: a\nrole: r\nenv:\n  runner:\n    A: '1'\n",
    );
    let fifo = w.fifo("in.fifo");
    let sock = w.socket("in.sock");
    for f in [fifo.as_path(), sock.as_path(), Path::new("/dev/zero")] {
        let o = run(
            w.cmd(&[
                "harness",
                "resolve",
                h.to_str().unwrap(),
                "--env-file",
                f.to_str().unwrap(),
            ]),
            30,
        );
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(o.stderr.contains(f.to_str().unwrap()), "{}", o.stderr);
        assert!(o.stdout.is_empty());
    }
    // The harness file itself as a FIFO.
    let hf = w.fifo("fs/harness/f.yaml");
    let o = run(w.cmd(&["harness", "resolve", hf.to_str().unwrap()]), 30);
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("f.yaml"), "{}", o.stderr);
}

#[test]
fn dotenv_cli_on_fifo_socket_device() {
    let w = W::new();
    let fifo = w.fifo("a.fifo");
    let sock = w.socket("a.sock");
    for f in [fifo.as_path(), sock.as_path(), Path::new("/dev/zero")] {
        for sub in ["parse", "check"] {
            let o = run(w.cmd(&["dotenv", sub, f.to_str().unwrap()]), 30);
            assert_eq!(o.code, Some(1), "{sub} {f:?}: {}", o.stderr);
            assert!(
                o.stderr
                    .starts_with(&format!("agentenv: error: cannot read {}: ", f.display())),
                "{}",
                o.stderr
            );
        }
    }
    // A pipe with a writer is read like a file (`<(cmd)`).
    let o = run(
        {
            let mut c = Command::new("bash");
            c.arg("-c")
                .arg(format!(
                    "{} dotenv parse <(printf 'P=1\\n')",
                    support::agentenv_bin().display()
                ))
                .env_clear()
                .env("PATH", "/usr/bin:/bin");
            c
        },
        30,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.json()["P"], "1");
}

// ---------------------------------------------------------------------------
// Symlink loops, files where directories are expected

#[test]
fn overlay_symlink_loops_are_survived() {
    let w = W::new();
    w.link("loop", "home/.agents/overlays/loop");
    w.link("b", "home/.agents/overlays/a");
    w.link("a", "home/.agents/overlays/b");
    w.link("../overlays", "home/.agents/overlays/up");
    w.link("env", "home/.agents/overlays/ok/env");
    w.write("home/.agents/overlays/real/env", "REAL=1\n");
    w.link("../../.agents", "proj/.agents");
    let o = w.env(&[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.json()["REAL"], "1");
}

#[test]
fn files_where_store_and_overlay_directories_are_expected() {
    // Tests run as root, so "unreadable" is made with ENOTDIR.
    for (file, also) in [
        ("home/.agents", None),
        ("home/.agents/overlays", Some("home/.agents/env")),
        ("proj/.agents", Some("home/.agents/env")),
        ("home/.agents/overlays/x", Some("home/.agents/env")),
        ("home/.agents/bin", Some("home/.agents/env")),
    ] {
        let w = W::new();
        if let Some(also) = also {
            w.write(also, "STILL=1\n");
        }
        let p = w.p(file);
        if p.is_dir() {
            std::fs::remove_dir(&p).unwrap();
        }
        w.write(file, format!("X={CANARY}\n"));
        let o = w.env(&[]);
        o.no_canary();
        assert_eq!(o.code, Some(0), "{file}: {}", o.stderr);
        if also.is_some() {
            assert_eq!(o.json()["STILL"], "1", "{file}");
        }
    }
    // --agents-dir naming a file, and a path through a file.
    let w = W::new();
    let f = w.write("afile", "x");
    for d in [f.clone(), f.join("sub")] {
        let o = w.env(&["--agents-dir", d.to_str().unwrap()]);
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
}

// ---------------------------------------------------------------------------
// A 1 GiB env file: bounded memory, clear outcome

const GIB: u64 = 1 << 30;
/// Peak RSS allowed for a run that is handed a 1 GiB file.
const MAX_HWM_KIB: u64 = 200 * 1024;

#[test]
fn one_gib_operator_env_file_is_refused_in_bounded_memory() {
    let w = W::new();
    w.sparse("plug/.env", GIB);
    let report = w.p("r.json");
    let o = run(
        w.cmd(&[
            "launch",
            "--plugin-root",
            w.p("plug").to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "--",
            "true",
        ]),
        60,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.hwm_kib < MAX_HWM_KIB, "peak RSS {} KiB", o.hwm_kib);
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(r["files"][0]["state"], "unreadable");
    assert!(o.stderr.contains("larger than 64 MiB"), "{}", o.stderr);
}

#[test]
fn one_gib_session_plain_file_is_skipped_in_bounded_memory() {
    let w = W::new();
    w.sparse("home/.agents/env", GIB);
    w.write("proj/.agents/local.env", "AFTER=1\n");
    let o = w.env(&[]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.hwm_kib < MAX_HWM_KIB, "peak RSS {} KiB", o.hwm_kib);
    assert_eq!(o.json()["AFTER"], "1");
    assert!(
        o.stderr.contains("env file skipped") && o.stderr.contains("larger than 16 MiB"),
        "{}",
        o.stderr
    );
    // A real (non-sparse) 17 MiB file of repeated assignments: same outcome.
    let w = W::new();
    let line = format!("K={CANARY}\n");
    w.write("home/.agents/env", line.repeat((17 << 20) / line.len() + 1));
    let o = w.env(&[]);
    o.no_canary();
    assert_eq!(o.code, Some(0));
    assert!(o.stderr.contains("larger than 16 MiB"), "{}", o.stderr);
}

#[test]
fn one_gib_harness_and_dotenv_inputs_are_refused_in_bounded_memory() {
    let w = W::new();
    let big = w.sparse("big.env", GIB);
    let h = w.write(
        "fs/harness/h.yaml",
        "agent: a\nrole: r\nenv:\n  runner:\n    A: '1'\n",
    );
    let o = run(
        w.cmd(&[
            "harness",
            "resolve",
            h.to_str().unwrap(),
            "--env-file",
            big.to_str().unwrap(),
        ]),
        60,
    );
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("exceeds maximum size"), "{}", o.stderr);
    assert!(o.hwm_kib < MAX_HWM_KIB);
    let hy = w.sparse("fs/harness/big.yaml", GIB);
    let o = run(w.cmd(&["harness", "resolve", hy.to_str().unwrap()]), 60);
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("larger than 16 MiB"), "{}", o.stderr);
    assert!(o.hwm_kib < MAX_HWM_KIB);
    for sub in ["parse", "check"] {
        let o = run(w.cmd(&["dotenv", sub, big.to_str().unwrap()]), 60);
        assert_eq!(o.code, Some(1));
        assert!(o.stderr.contains("larger than 64 MiB"), "{}", o.stderr);
        assert!(o.hwm_kib < MAX_HWM_KIB);
    }
}

// ---------------------------------------------------------------------------
// Non-UTF-8 names and values

#[test]
fn non_utf8_file_names_and_values() {
    let w = W::new();
    // A store under a non-UTF-8 HOME, with a non-UTF-8 value.
    let home = w.root.join(OsStr::from_bytes(b"h\xffome"));
    std::fs::create_dir_all(home.join(".agents")).unwrap();
    std::fs::write(home.join(".agents/env"), b"V=a\xffb\nW=ok\n").unwrap();
    let mut c = w.cmd(&["env", "--format", "json", "--diff"]);
    c.env("HOME", &home);
    let o = run(c, 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // Undecodable bytes print as lone surrogates (`\udcff`), as the
    // reference's JSON does; serde_json refuses those, so check the text.
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert!(text.contains("\"W\": \"ok\""), "{text}");
    assert!(text.contains("\"V\": \"a\\udcffb\""), "{text}");
    // exec hands the raw bytes to the child.
    let mut c = w.cmd(&["exec", "--", "sh", "-c", "printf %s \"$V\""]);
    c.env("HOME", &home);
    let o = run(c, 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, b"a\xffb");
    // dotenv parse on a non-UTF-8 file name.
    let f = w.root.join(OsStr::from_bytes(b"n\xfe.env"));
    std::fs::write(&f, b"A=\xfe\n").unwrap();
    let mut c = w.cmd(&["dotenv", "parse"]);
    c.arg(&f);
    let o = run(c, 30);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // The operator layer: raw bytes reach the child.
    std::fs::create_dir_all(w.p("plug")).unwrap();
    std::fs::write(w.p("plug/.env"), b"OPV=x\xfey\n").unwrap();
    let o = run(
        w.cmd(&[
            "launch",
            "--plugin-root",
            w.p("plug").to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "printf %s \"$OPV\"",
        ]),
        30,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // The reference (Node) decodes .env files as UTF-8 with replacement.
    assert_eq!(o.stdout, "x\u{fffd}y".as_bytes());
    // Harness YAML that is not UTF-8: an error naming the file.
    let h = w.write(
        "fs/harness/bad.yaml",
        b"agent: a\nrole: r\nenv:\n  runner:\n    A: \"\xff\"\n",
    );
    let o = run(w.cmd(&["harness", "resolve", h.to_str().unwrap()]), 30);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains("bad.yaml") && o.stderr.contains("UTF-8"),
        "{}",
        o.stderr
    );
}

// ---------------------------------------------------------------------------
// env.py and plain files that misbehave

fn py_case(body: &str, timeout: &str) -> (W, Out) {
    let w = W::new();
    w.write("home/.agents/env.py", body);
    w.write("proj/.agents/local.env", "AFTER=1\n");
    let o = w.env(&["--timeout", timeout]);
    (w, o)
}

#[test]
fn env_py_that_never_exits_is_killed_at_the_timeout() {
    let (_w, o) = py_case("import time\ntime.sleep(1000)\n", "1");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(15), "{:?}", o.elapsed);
    assert!(o.stderr.contains("timed out after 1 s"), "{}", o.stderr);
    assert_eq!(o.json()["AFTER"], "1");
}

#[test]
fn env_py_whose_grandchild_holds_stdout_open() {
    // Same process group: killed with it at the timeout.
    let (_w, o) = py_case(
        "import os, time, json\nif os.fork() == 0:\n    time.sleep(1000)\nprint(json.dumps({'G': '1'}))\n",
        "1",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(15), "{:?}", o.elapsed);
    assert!(o.stderr.contains("timed out"), "{}", o.stderr);
    assert_eq!(o.json()["AFTER"], "1");
    // A grandchild that escapes the group (setsid) still cannot hold
    // agentenv: the timeout returns without waiting for the pipe.
    let (_w, o) = py_case(
        "import os, time, json\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\n    os._exit(0)\nprint(json.dumps({'G': '1'}))\n",
        "1",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(15), "{:?}", o.elapsed);
    assert!(o.stderr.contains("timed out"), "{}", o.stderr);
}

#[test]
fn env_py_that_prints_100_mib_fails_in_bounded_memory() {
    let (_w, o) = py_case(
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.write(chunk)\n",
        "30",
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stderr.contains("output over 16 MiB"), "{}", o.stderr);
    assert!(o.hwm_kib < MAX_HWM_KIB, "peak RSS {} KiB", o.hwm_kib);
    assert_eq!(o.json()["AFTER"], "1");
}

#[test]
fn env_py_that_dies_by_a_signal() {
    let (_w, o) = py_case(
        &format!("import os, signal\nprint('{{\"S\": \"{CANARY}\"')\nos.kill(os.getpid(), signal.SIGKILL)\n"),
        "10",
    );
    o.no_canary();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    // The reference reports a signal death as Python does: `exit -9`.
    assert!(o.stderr.contains("env.py failed (exit -9)"), "{}", o.stderr);
    let j = o.json();
    assert_eq!(j["AFTER"], "1");
    assert!(j.get("S").is_none());
}

#[test]
fn plain_file_that_execs_sleep_is_killed_at_the_timeout() {
    let w = W::new();
    w.write("home/.agents/env", "exec sleep 1000\n");
    w.write("proj/.agents/local.env", "AFTER=1\n");
    let o = w.env(&["--timeout", "1"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(15), "{:?}", o.elapsed);
    assert_eq!(o.json()["AFTER"], "1");
}

// ---------------------------------------------------------------------------
// exec limits: one string over 128 KiB, a total over ARG_MAX

fn big_value(n: usize) -> String {
    let mut s = CANARY.repeat(n / CANARY.len() + 1);
    s.truncate(n);
    s
}

fn assert_exec_refused(o: &Out, var: &str) {
    o.no_canary();
    assert_eq!(o.code, Some(126), "{}", o.stderr);
    assert!(o.stderr.contains(var), "names {var}: {}", o.stderr);
    assert!(!o.stderr.contains("Argument list too long"), "{}", o.stderr);
}

#[test]
fn a_variable_over_128_kib_is_refused_before_exec() {
    let w = W::new();
    w.write(
        "home/.agents/env",
        format!("HUGE_VAR={}\n", big_value(200 << 10)),
    );
    let o = run(w.cmd(&["exec", "--", "true"]), 60);
    assert_exec_refused(&o, "HUGE_VAR");
    assert!(o.stderr.contains("128 KiB"), "{}", o.stderr);

    w.write("plug/.env", format!("HUGE_OP={}\n", big_value(200 << 10)));
    let o = run(
        w.cmd(&[
            "launch",
            "--plugin-root",
            w.p("plug").to_str().unwrap(),
            "--",
            "true",
        ]),
        60,
    );
    assert_exec_refused(&o, "HUGE_OP");

    let h = w.write(
        "fs/harness/h.yaml",
        format!(
            "agent: a\nrole: r\nenv:\n  runner:\n    HUGE_RUN: '{}'\n",
            big_value(200 << 10)
        ),
    );
    let o = run(
        w.cmd(&["harness", "run", h.to_str().unwrap(), "--", "true"]),
        60,
    );
    assert_exec_refused(&o, "HUGE_RUN");
}

#[test]
fn a_total_environment_over_arg_max_is_refused_before_exec() {
    // 8 MiB stack → 2 MiB limit; 40 × 100 KiB = 4 MB is over any default.
    let w = W::new();
    let mut body = String::new();
    for i in 0..40 {
        body.push_str(&format!("MANY_{i:02}={}\n", big_value(100 << 10)));
    }
    body.push_str(&format!("MANY_XL={}\n", big_value(110 << 10)));
    w.write("home/.agents/env", &body);
    let o = run(w.cmd(&["exec", "--", "true"]), 60);
    assert_exec_refused(&o, "MANY_XL");
    assert!(o.stderr.contains("limit of execve"), "{}", o.stderr);

    w.write("plug/.env", &body);
    let o = run(
        w.cmd(&[
            "launch",
            "--plugin-root",
            w.p("plug").to_str().unwrap(),
            "--",
            "true",
        ]),
        60,
    );
    assert_exec_refused(&o, "MANY_XL");

    let mut y = String::from("agent: a\nrole: r\nenv:\n  runner:\n");
    for i in 0..40 {
        y.push_str(&format!("    MANY_{i:02}: '{}'\n", big_value(100 << 10)));
    }
    let h = w.write("fs/harness/h.yaml", y);
    let o = run(
        w.cmd(&["harness", "run", h.to_str().unwrap(), "--", "true"]),
        60,
    );
    o.no_canary();
    assert_eq!(o.code, Some(126), "{}", o.stderr);
    assert!(o.stderr.contains("limit of execve"), "{}", o.stderr);
}

// ---------------------------------------------------------------------------
// A read-only HOME, a full disk

#[test]
fn home_that_is_a_file() {
    let w = W::new();
    let f = w.write("homefile", "x");
    let mut c = w.cmd(&["env", "--format", "json", "--diff"]);
    c.env("HOME", &f);
    let o = run(c, 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    o.json();
    let mut c = w.cmd(&["exec", "--", "true"]);
    c.env("HOME", &f);
    assert_eq!(run(c, 60).code, Some(0));
}

/// A 64 KiB tmpfs, when this machine lets us mount one (root in CI).
struct TinyFs(PathBuf);

impl TinyFs {
    fn mount(at: PathBuf) -> Option<TinyFs> {
        std::fs::create_dir_all(&at).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(TinyFs(at))
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Where writes fail as on a full disk: a filled 64 KiB tmpfs when this
/// machine lets us mount one (root in CI); otherwise (or with
/// `AGENTENV_TEST_NO_MOUNT=1`) a plain directory, with agentenv run under
/// `ulimit -f 32` (16 KiB) and SIGXFSZ ignored, so a larger write fails
/// with `EFBIG` — the same "the write failed half way" for the tool.
enum Full {
    Tmpfs(TinyFs),
    Fsize(PathBuf),
}

impl Full {
    fn new(at: PathBuf) -> Full {
        let no_mount = std::env::var_os("AGENTENV_TEST_NO_MOUNT").is_some_and(|v| v == "1");
        match (!no_mount).then(|| TinyFs::mount(at.clone())).flatten() {
            Some(t) => Full::Tmpfs(t),
            None => {
                std::fs::create_dir_all(&at).unwrap();
                Full::Fsize(at)
            }
        }
    }
    fn dir(&self) -> &Path {
        match self {
            Full::Tmpfs(t) => &t.0,
            Full::Fsize(p) => p,
        }
    }
    /// Use up the space (tmpfs only: the rlimit needs no filling).
    fn fill(&self) {
        if let Full::Tmpfs(t) = self {
            let _ = std::fs::write(t.0.join("filler"), vec![b'x'; 64 << 10]);
        }
    }
    fn unfill(&self) {
        if let Full::Tmpfs(t) = self {
            std::fs::remove_file(t.0.join("filler")).unwrap();
        }
    }
    /// `agentenv args…` as it runs while the disk is full.
    fn cmd(&self, w: &W, args: &[&str]) -> Command {
        match self {
            Full::Tmpfs(_) => w.cmd(args),
            Full::Fsize(_) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg("ulimit -f 32 && trap '' XFSZ && exec \"$0\" \"$@\"")
                    .arg(support::agentenv_bin())
                    .args(args)
                    .current_dir(w.p("proj"))
                    .env_clear()
                    .envs(w.base_env())
                    .stdin(Stdio::null());
                c
            }
        }
    }
}

#[test]
fn full_disk_during_sandbox_env_write_keeps_the_old_file() {
    let w = W::new();
    let fs = Full::new(w.p("tiny"));
    let out = fs.dir().join("sandbox.env");
    std::fs::write(&out, "export OLD='1'\n").unwrap();
    fs.fill();
    let h = w.write(
        "fs/harness/h.yaml",
        format!(
            "agent: a\nrole: r\nenv:\n  sandbox:\n    BIG: '{}'\n",
            big_value(32 << 10)
        ),
    );
    let o = run(
        fs.cmd(
            &w,
            &[
                "harness",
                "sandbox-env",
                h.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ],
        ),
        30,
    );
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "export OLD='1'\n");
    // No temp file left behind.
    let left: Vec<_> = std::fs::read_dir(fs.dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".agentenv-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // /dev/full as a launch report target: the launch still runs.
    let o = run(
        w.cmd(&["launch", "--report", "/dev/full", "--", "true"]),
        30,
    );
    assert!(o.code.is_some());
    // Written in place, never replaced by a regular file.
    assert_still_a_device("/dev/full");
    let o = run(
        w.cmd(&[
            "harness",
            "sandbox-env",
            h.to_str().unwrap(),
            "-o",
            "/dev/full",
        ]),
        30,
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert_still_a_device("/dev/full");
}

fn assert_still_a_device(p: &str) {
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata(p).unwrap().file_type().is_char_device(),
        "{p} was replaced by a regular file"
    );
}

// ---------------------------------------------------------------------------
// The cache and --into under pressure

#[test]
fn full_disk_during_into_keeps_the_old_file() {
    let w = W::new();
    let fs = Full::new(w.p("tiny"));
    w.write("home/.agents/env", format!("BIG={}\n", big_value(40 << 10)));
    let rc = fs.dir().join("rc");
    let old = "# my shell rc\nalias ll='ls -l'\n";
    std::fs::write(&rc, old).unwrap();
    fs.fill();
    let o = run(
        fs.cmd(
            &w,
            &["env", "--format", "export", "--into", rc.to_str().unwrap()],
        ),
        60,
    );
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("rc"), "names the file: {}", o.stderr);
    assert_eq!(std::fs::read_to_string(&rc).unwrap(), old);
    let temps = std::fs::read_dir(fs.dir())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".agentenv-"))
        .count();
    assert_eq!(temps, 0);
    // /dev/full and /dev/zero as the target: a clear error (reading them
    // never ends; a value file is never written into a device), and still
    // devices.
    for dev in ["/dev/full", "/dev/zero"] {
        let o = run(w.cmd(&["env", "--format", "export", "--into", dev]), 60);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(
            o.stderr.contains("it is a FIFO, device or socket"),
            "{}",
            o.stderr
        );
        assert!(o.hwm_kib < MAX_HWM_KIB);
        assert_still_a_device(dev);
    }
}

#[test]
fn full_disk_during_a_cache_write_is_harmless() {
    let w = W::new();
    let fs = Full::new(w.p("tinystore"));
    let store = fs.dir().join(".agents");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(
        store.join("env"),
        format!("BIG={}\nSMALL=1\n", big_value(40 << 10)),
    )
    .unwrap();
    fs.fill();
    let args = [
        "env",
        "--format",
        "json",
        "--diff",
        "--agents-dir",
        store.to_str().unwrap(),
    ];
    let plain = run(w.cmd(&args), 60);
    let mut cached_args = args.to_vec();
    cached_args.push("--cache");
    let o = run(fs.cmd(&w, &cached_args), 60);
    o.no_canary();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, plain.stdout, "the rendering is still right");
    // No torn entry: whatever is in the cache dir is a complete rendering.
    let dir = store.join(".cache/env");
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".agentenv-"), "temp file left: {name}");
        assert_eq!(
            std::fs::read(e.path()).unwrap(),
            plain.stdout,
            "torn entry {name}"
        );
    }
    // Space again: the next run writes the entry and replays it after.
    fs.unfill();
    let o = run(w.cmd(&cached_args), 60);
    assert_eq!(o.stdout, plain.stdout);
    let o = run(w.cmd(&cached_args), 60);
    assert_eq!(o.stdout, plain.stdout);
}

#[test]
fn cache_with_a_home_that_is_a_file() {
    let w = W::new();
    let f = w.write("homefile", "x");
    let mut c = w.cmd(&["env", "--format", "json", "--diff", "--cache"]);
    c.env("HOME", &f);
    let o = run(c, 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    o.json();
    // A cache dir that is a file: used uncached, output unchanged.
    let w = W::new();
    w.write("home/.agents/env", "A=1\n");
    w.write("home/.agents/.cache", "not a dir");
    let plain = w.env(&[]);
    let o = w.env(&["--cache"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, plain.stdout);
}

#[test]
fn thirty_two_concurrent_cache_runs() {
    let w = W::new();
    w.write(
        "home/.agents/env",
        format!("A=1\nBIG={}\n", big_value(64 << 10)),
    );
    w.write(
        "home/.agents/env.py",
        "import json, time\ntime.sleep(0.2)\nprint(json.dumps({'PY': 'x' * 5000}))\n",
    );
    let expected = w.env(&[]);
    assert_eq!(expected.code, Some(0));
    let mut children = Vec::new();
    for _ in 0..32 {
        let mut c = w.cmd(&["env", "--format", "json", "--diff", "--cache"]);
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        children.push(c.spawn().unwrap());
    }
    for ch in children {
        let out = ch.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, expected.stdout, "every output is correct");
    }
    let dir = w.p("home/.agents/.cache/env");
    let mut entries = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with(".agentenv-"), "temp file left: {name}");
        assert_eq!(
            std::fs::read(e.path()).unwrap(),
            expected.stdout,
            "torn entry"
        );
        entries += 1;
    }
    assert_eq!(entries, 1, "one key, one entry");
    // And the replay is right.
    assert_eq!(w.env(&["--cache"]).stdout, expected.stdout);
}

#[test]
fn nul_values_and_bad_names_are_refused_before_exec_naming_the_variable() {
    let w = W::new();
    for (yaml_key, yaml_val, shown) in [
        ("N", "\"a\\0hostileCANARY93\"", "\"N\""),
        // A name carrying a value is shown up to its valid prefix (#16.10).
        ("\"GH_TOKEN=hostileCANARY93\"", "v", "\"GH_TOKEN…\""),
    ] {
        let h = w.write(
            "fs/harness/h.yaml",
            format!("agent: a\nrole: r\nenv:\n  runner:\n    {yaml_key}: {yaml_val}\n"),
        );
        let o = run(
            w.cmd(&["harness", "run", h.to_str().unwrap(), "--", "true"]),
            30,
        );
        o.no_canary();
        assert_eq!(o.code, Some(126), "{}", o.stderr);
        assert!(o.stderr.contains(shown), "{}", o.stderr);
    }
}

#[test]
fn deeply_nested_or_huge_cel_guards_are_errors_not_stack_overflows() {
    // A few hundred `(` used to overflow the parser's stack (SIGABRT).
    let w = W::new();
    for (when, msg) in [
        (
            format!("{}true{}", "(".repeat(400), ")".repeat(400)),
            "nested deeper than 32 levels",
        ),
        (
            format!("{} == []", "[".repeat(300) + &"]".repeat(300)),
            "nested deeper than 32 levels",
        ),
        (
            format!("event{} == 1", ".a".repeat(20000)),
            "longer than 4096 bytes",
        ),
    ] {
        let h = w.write(
            "fs/harness/h.yaml",
            format!("agent: a\nrole: r\noverlays:\n  - when: \"{when}\"\n"),
        );
        let o = run(w.cmd(&["harness", "resolve", h.to_str().unwrap()]), 60);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(o.stderr.contains(msg), "{}", o.stderr);
    }
    // The deepest allowed guard still works.
    let h = w.write(
        "fs/harness/h.yaml",
        format!(
            "agent: a\nrole: r\noverlays:\n  - when: \"{}true{}\"\n    env:\n      runner:\n        X: 'y'\n",
            "(".repeat(32),
            ")".repeat(32)
        ),
    );
    let o = run(w.cmd(&["harness", "resolve", h.to_str().unwrap()]), 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.json()["env"]["runner"]["X"], "y");
}

// ---- harness, issue #16 items 4–11 ------------------------------------

fn resolve_harness(w: &W, yaml: &str, extra: &[&str], limit: u64) -> Out {
    let h = w.write("fs/harness/h.yaml", yaml);
    let mut args = vec!["harness", "resolve", h.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(w.cmd(&args), limit)
}

#[test]
fn cel_guards_that_would_run_forever_are_evaluation_errors() {
    // #16.4: four nested `exists` over 300-element literals (~2.5 KB, within
    // the size and nesting caps) used to run forever; nested `map`s
    // allocated until the process aborted. Now: a budget error, the overlay
    // does not match, the next one still does.
    let w = W::new();
    let l = format!("[{}]", vec!["1"; 300].join(","));
    for when in [
        format!("{l}.exists(a, {l}.exists(b, {l}.exists(c, {l}.exists(d, a + b + c + d == 0))))"),
        format!("size({l}.map(a, {l}.map(b, {l}.map(c, [a, b, c])))) == 0"),
    ] {
        let o = resolve_harness(
            &w,
            &format!(
                "agent: a\nrole: r\noverlays:\n  - when: '{when}'\n    env: {{runner: {{X: bad}}}}\n  - when: 'true'\n    env: {{runner: {{Y: good}}}}\n"
            ),
            &[],
            20,
        );
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert!(o.elapsed < Duration::from_secs(10), "{:?}", o.elapsed);
        assert!(
            o.stderr
                .contains("harness: overlay[0].when eval failed: evaluation budget exceeded"),
            "{}",
            o.stderr
        );
        let j = o.json();
        assert_eq!(j["env"]["runner"], serde_json::json!({"Y": "good"}));
    }
}

#[test]
fn host_files_merge_of_large_lists_is_linear() {
    // #16.5: 150k base entries × 150k child entries were compared pairwise.
    let w = W::new();
    let n = 150_000;
    let list = |tag: &str| {
        let mut s = String::from("host_files:\n");
        for i in 0..n {
            s.push_str(&format!(
                "- {{src: '${{FULLSEND_DIR}}/{tag}{i}', dest: /tmp/{i}}}\n"
            ));
        }
        s
    };
    w.write(
        "fs/harness/base.yaml",
        format!("agent: a\nrole: r\n{}", list("b")),
    );
    let o = resolve_harness(&w, &format!("base: base.yaml\n{}", list("c")), &[], 120);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.elapsed < Duration::from_secs(60), "{:?}", o.elapsed);
    let j = o.json();
    let hf = j["host_files"].as_array().unwrap();
    assert_eq!(hf.len(), n);
    assert!(hf[n - 1]["src"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/c{}", n - 1)));
}

#[test]
fn a_shell_default_literal_is_not_printed() {
    // #16.6: `${GH_TOKEN:-<token>}` looks up the name `GH_TOKEN:-<token>`;
    // the message used to print it.
    let w = W::new();
    let o = resolve_harness(
        &w,
        "agent: a\nrole: r\nenv:\n  runner:\n    T: \"${GH_TOKEN:-hostileCANARY93}\"\n",
        &[],
        30,
    );
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("${GH_TOKEN…}"), "{}", o.stderr);
    assert!(
        o.stderr.contains("\":-\" are not supported"),
        "{}",
        o.stderr
    );
}

#[test]
fn an_undeclared_cel_identifier_is_named_by_position() {
    // #16.7: an unquoted token in a guard used to be echoed.
    let w = W::new();
    for (when, pos) in [
        ("hostileCANARY93 == 'x'", "at 1:1"),
        ("event.a == 1 || hostileCANARY93(1)", "at 1:32"),
    ] {
        let o = resolve_harness(
            &w,
            &format!("agent: a\nrole: r\noverlays:\n  - when: \"{when}\"\n"),
            &[],
            30,
        );
        o.no_canary();
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(
            o.stderr
                .contains(&format!("overlays[0].when: undeclared reference {pos}")),
            "{}",
            o.stderr
        );
    }
}

#[test]
fn a_bad_config_forge_value_is_not_printed() {
    // #16.8
    let w = W::new();
    let c = w.write("fs/config.yaml", "forge: hostileCANARY93\n");
    let o = resolve_harness(
        &w,
        "agent: a\nrole: r\n",
        &["--config", c.to_str().unwrap()],
        30,
    );
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("config.forge: not a valid forge platform (valid: github, gitlab, jira)"),
        "{}",
        o.stderr
    );
}

#[test]
fn credentials_in_a_url_base_are_never_printed() {
    // #16.9: a `/` in the password, `HTTPS://`, `https:/` and friends.
    let w = W::new();
    let sha = "0".repeat(64);
    for base in [
        format!("https://u:pa/hostileCANARY93@example.com/h.yaml#sha256={sha}"),
        format!("HTTPS://u:hostileCANARY93@example.com/h.yaml#sha256={sha}"),
        format!("https:/u:hostileCANARY93@example.com/h.yaml#sha256={sha}"),
        format!("https:u:hostileCANARY93@example.com/h.yaml#sha256={sha}"),
        "https://u:p#hostileCANARY93@example.com/h.yaml".to_string(),
        format!("https://u:p?hostileCANARY93@example.com/h.yaml#sha256={sha}"),
        "ftp://u:hostileCANARY93@example.com/h.yaml".to_string(),
        "http://u:hostileCANARY93@example.com/h.yaml".to_string(),
    ] {
        let o = resolve_harness(&w, &format!("agent: a\nrole: r\nbase: '{base}'\n"), &[], 30);
        o.no_canary();
        assert_eq!(o.code, Some(1), "{base}: {}", o.stderr);
        assert!(o.stderr.contains("loading base chain"), "{}", o.stderr);
    }
}

#[test]
fn a_key_carrying_a_value_is_shown_by_its_valid_prefix() {
    // #16.10: as an env.sandbox key (skip warning) and an env.runner key
    // (unset-variable message), and duplicate flow-map keys that are tokens.
    let w = W::new();
    let o = resolve_harness(
        &w,
        "agent: a\nrole: r\nenv:\n  sandbox:\n    \"GH_TOKEN=hostileCANARY93\": v\n",
        &[],
        30,
    );
    o.no_canary();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr.contains("env.sandbox key \"GH_TOKEN…\""),
        "{}",
        o.stderr
    );
    let o = resolve_harness(
        &w,
        "agent: a\nrole: r\nenv:\n  runner:\n    \"GH_TOKEN hostileCANARY93\": \"${NOPE}\"\n",
        &[],
        30,
    );
    o.no_canary();
    assert!(o.stderr.contains("env.runner[GH_TOKEN…]"), "{}", o.stderr);
    let o = resolve_harness(
        &w,
        "agent: a\nrole: r\nenv: {runner: {hostileCANARY93: 1, hostileCANARY93: 2}}\n",
        &[],
        30,
    );
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("mapping key already defined at line 3"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_base_symlinked_out_of_the_fullsend_dir_is_refused() {
    // #16.11: containment was a text comparison.
    let w = W::new();
    let outside = w.write(
        "outside/secret.yaml",
        "agent: a\nrole: r\nenv: {runner: {LEAK: hostileCANARY93}}\n",
    );
    w.link(&outside, "fs/harness/common.yaml");
    let o = resolve_harness(&w, "agent: a\nrole: r\nbase: common.yaml\n", &[], 30);
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("base path \"common.yaml\" escapes workspace root via symlink"),
        "{}",
        o.stderr
    );
    // A directory link out of the tree too; a link that stays inside is fine.
    w.link(w.p("outside"), "fs/harness/dir");
    let o = resolve_harness(&w, "agent: a\nrole: r\nbase: dir/secret.yaml\n", &[], 30);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    let inside = w.write("fs/harness/real.yaml", "env: {runner: {OK: 'yes'}}\n");
    w.link(&inside, "fs/harness/alias.yaml");
    let o = resolve_harness(&w, "agent: a\nrole: r\nbase: alias.yaml\n", &[], 30);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.json()["env"]["runner"]["OK"], "yes");
}

// ---------------------------------------------------------------------------
// #16.12: layers get /dev/null as stdin

#[test]
fn layers_read_dev_null_so_the_exec_command_keeps_its_stdin() {
    // A plain file doing `read -r X` (bash) or an env.py reading stdin used
    // to swallow the input meant for `exec`'s command (an MCP server's first
    // message).
    use std::io::Write;
    let cases = [
        ("home/.agents/env", "read -r X\nLAYER_READ=\"got:$X\"\n"),
        (
            "home/.agents/env.py",
            "import json, sys\nprint(json.dumps({'LAYER_READ': 'got:' + sys.stdin.read()}))\n",
        ),
    ];
    for (file, body) in cases {
        let w = W::new();
        w.write(file, body);
        let (r, mut wr) = std::io::pipe().unwrap();
        wr.write_all(b"first\nsecond\n").unwrap();
        drop(wr);
        let mut c = w.cmd(&[
            "exec",
            "--",
            "sh",
            "-c",
            "read -r L; printf '%s|%s' \"$L\" \"$LAYER_READ\"",
        ]);
        c.stdin(r);
        let o = run(c, 60);
        assert_eq!(o.code, Some(0), "{file}: {}", o.stderr);
        // The layer ran and read an empty stdin; the command got line one.
        assert_eq!(String::from_utf8_lossy(&o.stdout), "first|got:", "{file}");
    }
}

// ---------------------------------------------------------------------------
// #16.5 (pipes): one pipe deadline per command

/// A child killed (by its id) when the test ends, passing or not.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn operator_pipe_inputs_share_one_deadline_per_command() {
    // The 5 s pipe timeout applied per input: three FIFOs nobody writes
    // took 15 s. Now they share one deadline, and a pipe met after it is
    // refused without being opened — even one whose writer is ready (it
    // was read before, after the three waits).
    let w = W::new();
    let dead: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|n| w.fifo(&format!("plug/{n}.fifo")))
        .collect();
    let ready = w.fifo("plug/ready.fifo");
    let _writer = KillOnDrop(
        Command::new("sh")
            .arg("-c")
            .arg("printf 'LATE=1\\n' > \"$0\"")
            .arg(&ready)
            .spawn()
            .unwrap(),
    );
    w.write("plug/ok.env", format!("OK=1\nS={CANARY}\n"));
    let mut list: Vec<String> = dead.iter().map(|p| p.display().to_string()).collect();
    list.push(ready.display().to_string());
    list.push(w.p("plug/ok.env").display().to_string());
    let report = w.p("report.json");
    let mut c = w.cmd(&[
        "launch",
        "--report",
        report.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo \"OK=$OK LATE=${LATE:-unset}\"",
    ]);
    c.env("AGENT_BUNDLE_ENV_FILE", list.join(":"));
    let o = run(c, 60);
    o.no_canary();
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "OK=1 LATE=unset\n");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let states: Vec<&str> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        [
            "unreadable",
            "unreadable",
            "unreadable",
            "unreadable",
            "loaded"
        ]
    );
    for p in dead.iter().chain([&ready]) {
        assert!(
            o.stderr
                .contains(&format!("{} (pipe not finished within 5 s)", p.display())),
            "{}",
            o.stderr
        );
    }
}

// ---------------------------------------------------------------------------
// #16.2: a symlinked cache directory, a symlinked cache entry

fn set_mtime(p: &Path, secs_ago: u64) {
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(secs_ago))
        .unwrap();
}

/// A private directory holding files older than the cache TTL: one named
/// like a cache key, one like `~/.ssh`'s.
fn victim_dir(w: &W, rel: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let v = w.p(rel);
    std::fs::create_dir_all(&v).unwrap();
    std::fs::set_permissions(&v, std::fs::Permissions::from_mode(0o700)).unwrap();
    for name in ["id_ed25519", &"a".repeat(64)] {
        std::fs::write(v.join(name), CANARY).unwrap();
        set_mtime(&v.join(name), 1000);
    }
    v
}

fn assert_victim_intact(v: &Path) {
    for name in ["id_ed25519", &"a".repeat(64)] {
        assert_eq!(
            std::fs::read_to_string(v.join(name)).unwrap_or_default(),
            CANARY,
            "{} was deleted",
            v.join(name).display()
        );
    }
    assert_eq!(
        std::fs::read_dir(v).unwrap().count(),
        2,
        "nothing written into {}",
        v.display()
    );
}

#[test]
fn a_symlinked_cache_directory_is_refused_and_its_target_untouched() {
    // `<store>/.cache/env -> ~/.ssh` passed the ownership check (it followed
    // the link) and cleanup deleted every file in ~/.ssh older than 300 s.
    // The same with `.cache` itself a link.
    for layout in ["env", "cache"] {
        let w = W::new();
        w.write("home/.agents/env", "A=1\n");
        let plain = w.env(&[]);
        let v = if layout == "env" {
            let v = victim_dir(&w, "ssh");
            std::fs::create_dir_all(w.p("home/.agents/.cache")).unwrap();
            w.link(&v, "home/.agents/.cache/env");
            v
        } else {
            let v = victim_dir(&w, "elsewhere/env");
            w.link(w.p("elsewhere"), "home/.agents/.cache");
            v
        };
        let runs = [w.env(&["--cache"]), w.env(&["--cache"])];
        assert_victim_intact(&v);
        for o in runs {
            o.no_canary();
            assert_eq!(o.code, Some(0), "{layout}: {}", o.stderr);
            assert_eq!(o.stdout, plain.stdout, "{layout}");
            assert!(
                o.stderr.contains(
                    "is reached through a symbolic link (not followed); running uncached"
                ),
                "{layout}: {}",
                o.stderr
            );
        }
    }
}

#[test]
fn cache_cleanup_removes_only_names_that_look_like_keys() {
    let w = W::new();
    w.write("home/.agents/env", "A=1\n");
    let o = w.env(&["--cache"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let dir = w.p("home/.agents/.cache/env");
    let stale_key = dir.join("b".repeat(64));
    let other = dir.join("notes.txt");
    for f in [&stale_key, &other] {
        std::fs::write(f, "x").unwrap();
        set_mtime(f, 1000);
    }
    // A miss (another key) stores and cleans up.
    let o = w.env(&["--cache", "--format", "export"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(!stale_key.exists(), "a stale entry is removed");
    assert!(other.exists(), "a file not named like a key is kept");
}

#[test]
fn a_cache_entry_that_is_a_symlink_is_never_replayed() {
    let w = W::new();
    w.write("home/.agents/env", "A=1\n");
    let o = w.env(&["--cache"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let first = o.stdout.clone();
    let dir = w.p("home/.agents/.cache/env");
    let entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1);
    // The entry becomes a link to a fresh file of the same user with a
    // planted rendering.
    let planted = w.write("planted.json", "{\"PLANTED\": \"1\"}\n");
    std::fs::remove_file(&entries[0]).unwrap();
    std::os::unix::fs::symlink(&planted, &entries[0]).unwrap();
    let o = w.env(&["--cache"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, first, "recomputed, not the link's target");
    // The store replaced the link with an entry; the target is untouched.
    assert!(!std::fs::symlink_metadata(&entries[0])
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read_to_string(&planted).unwrap(),
        "{\"PLANTED\": \"1\"}\n"
    );
    assert_eq!(w.env(&["--cache"]).stdout, first);
}

// ---------------------------------------------------------------------------
// #16.3: env.py JSON with many keys

#[test]
fn env_py_json_with_99k_keys_is_read_in_linear_time() {
    // Duplicate lookups scanned every key so far: 100,000 keys took 23 s
    // (300,000 over 200 s), in one object and across one object per line.
    // Linear now; the bound below is only a hang guard. (An output holds at
    // most 100,000 values since issue 22 #14; this one stays under.)
    let n = 99_000;
    let bodies = [
        format!(
            "import json\nd = {{f'K{{i}}': f'v{{i}}' for i in range({n})}}\n\
             s = json.dumps(d)\nprint(s[:-1] + ', \"K0\": \"last\"}}')\n"
        ),
        format!(
            "import sys\nw = sys.stdout.write\nfor i in range({n}):\n    w('{{\"K%d\": \"v%d\"}}\\n' % (i, i))\n\
             w('{{\"K0\": \"last\", \"K1\": null}}\\n')\n"
        ),
    ];
    for (body, k1) in bodies.iter().zip([true, false]) {
        let w = W::new();
        w.write("home/.agents/env.py", body);
        let o = run(
            w.cmd(&["env", "--format", "json", "--diff", "--timeout", "100"]),
            120,
        );
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        assert!(!o.stderr.contains("env.py"), "{}", o.stderr);
        let j = o.json();
        let m = j.as_object().unwrap();
        // Duplicates keep the last value (K1's null in the per-line form
        // removes what its first line set).
        assert_eq!(m["K0"], "last");
        assert_eq!(m["K2"], "v2");
        assert_eq!(m[&format!("K{}", n - 1)], format!("v{}", n - 1));
        assert_eq!(m.contains_key("K1"), k1);
        let keys = m.keys().filter(|k| k.starts_with('K')).count();
        assert_eq!(keys, if k1 { n } else { n - 1 });
    }
}

// ---- #16.1: every value-file writer refuses another user's symlink ----

/// `--into`, `harness sandbox-env -o` and `launch --report` all write
/// files that can hold values. In a sticky world-writable directory
/// (`/tmp`) a symlink planted by another user must not be followed by any
/// of them (the kernel's `protected_symlinks` rule, which resolving the
/// link ourselves would bypass): the attacker's 0666 target stays empty and
/// nothing is created where a dangling link points. tests/it/into.rs pins the
/// finer rules for `--into` (own links and the directory owner's links are
/// followed).
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn every_value_file_writer_refuses_another_users_symlink_in_a_sticky_dir() {
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() {
        support::skip("foreign symlink writers", "needs root to chown a symlink");
        return;
    }
    const NOBODY: u32 = 65534;
    let w = W::new();
    w.write("home/.agents/env", format!("S={CANARY}\n"));
    w.write("plug/.env", format!("T={CANARY}\n"));
    let h = w.write(
        "fs/harness/h.yaml",
        "agent: a\nrole: r\nenv:\n  sandbox:\n    S: x\n",
    );
    let share = w.p("share");
    std::fs::create_dir(&share).unwrap();
    std::fs::set_permissions(&share, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let att = w.p("att");
    std::fs::create_dir(&att).unwrap();
    type Writer<'a> = Box<dyn Fn(&str) -> Command + 'a>;
    let cases: Vec<(&str, Writer)> = vec![
        (
            "env --into",
            Box::new(|p: &str| w.cmd(&["env", "--format", "export", "--into", p])),
        ),
        (
            "harness sandbox-env -o",
            Box::new(|p: &str| w.cmd(&["harness", "sandbox-env", h.to_str().unwrap(), "-o", p])),
        ),
        (
            "launch --report",
            Box::new(|p: &str| {
                let mut c = w.cmd(&["launch", "--report", p, "--", "true"]);
                c.env("AGENT_BUNDLE_ENV_FILE", w.p("plug/.env"));
                c
            }),
        ),
    ];
    for (i, (what, cmd)) in cases.iter().enumerate() {
        // A link to the attacker's 0666 file, both owned by "nobody".
        let target = att.join(format!("f{i}"));
        std::fs::write(&target, "").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o666)).unwrap();
        std::os::unix::fs::lchown(&target, Some(NOBODY), Some(NOBODY)).unwrap();
        let link = share.join(format!("link{i}"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(NOBODY), Some(NOBODY)).unwrap();
        let o = run(cmd(link.to_str().unwrap()), 60);
        o.no_canary();
        assert_eq!(o.code, Some(1), "{what}: {}", o.stderr);
        assert!(
            o.stderr.contains("sticky world-writable directory"),
            "{what}: {}",
            o.stderr
        );
        assert_eq!(
            std::fs::read(&target).unwrap(),
            b"",
            "{what} wrote through the link"
        );
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        // A dangling link: nothing is created where it points.
        let nowhere = att.join(format!("created{i}"));
        let dangling = share.join(format!("dangling{i}"));
        std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
        std::os::unix::fs::lchown(&dangling, Some(NOBODY), Some(NOBODY)).unwrap();
        let o = run(cmd(dangling.to_str().unwrap()), 60);
        assert_eq!(o.code, Some(1), "{what} (dangling): {}", o.stderr);
        assert!(
            !nowhere.exists(),
            "{what} created the dangling link's target"
        );
    }
}

// ---------------------------------------------------------------------------
// Hardening round 3 (issue 22): the trust gate against a hostile co-user.
// Cross-user cases run as two real uids through `setpriv` (the tests run as
// root): VICTIM runs agentenv, ATTACKER owns what it plants.

const VICTIM: u32 = 1234;
const ATTACKER: u32 = 65534;

/// `c` run as `uid` (real and effective, group too, no supplementary
/// groups), with the same program, arguments, environment and directory.
fn as_uid(uid: u32, c: &Command) -> Command {
    let id = uid.to_string();
    let mut s = Command::new("setpriv");
    s.args(["--reuid", &id, "--regid", &id, "--clear-groups", "--"])
        .arg(c.get_program())
        .args(c.get_args())
        .env_clear()
        .stdin(Stdio::null());
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            s.env(k, v);
        }
    }
    if let Some(d) = c.get_current_dir() {
        s.current_dir(d);
    }
    s
}

/// `chown -R uid:uid p` (links themselves, not their targets).
fn chown_r(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
    if std::fs::symlink_metadata(p).unwrap().is_dir() {
        for e in std::fs::read_dir(p).unwrap().flatten() {
            chown_r(&e.path(), uid);
        }
    }
}

/// Root is needed to act as two users; without it the case is skipped (and
/// fails under AGENTENV_REQUIRE_ALL=1).
fn need_root(what: &str) -> bool {
    if rustix::process::geteuid().is_root() && support::which("setpriv").is_some() {
        return true;
    }
    support::skip(what, "needs root and setpriv to act as two users");
    false
}

/// A world-traversable scratch tree (other uids must reach into it).
fn open_tree() -> W {
    use std::os::unix::fs::PermissionsExt;
    let w = W::new();
    std::fs::set_permissions(&w.root, std::fs::Permissions::from_mode(0o755)).unwrap();
    w
}

/// `agentenv ARGS` in `dir` with `HOME=home`, the trust state in
/// `home/state`, no system store, no hook cache.
fn in_dir(w: &W, home: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(support::agentenv_bin());
    c.env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("AGENTS_PYTHON", support::pinned_python())
        .env("AGENTS_SYSTEM_ROOT", w.p("no-system"))
        .env("AGENTENV_HOOK_CACHE", "0")
        .env("PWD", dir)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null());
    c
}

fn stdout_text(o: &Out) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// #22.1: the bytes the trust check digested are the bytes that run. The
/// allowed store's own `pre.env` plays the co-user who swaps `env` and
/// `env.py` for other code after the digest (deterministically, inside the
/// load window) and `local.env` swaps them back after the load, so the
/// store reads "allowed" again afterwards.
#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn a_store_file_swapped_during_the_load_never_runs() {
    let w = W::new();
    let pwn = w.p("PWNED");
    let good_py = "import json\nprint(json.dumps({'PYG': 'good'}))\n";
    let bad_py = format!(
        "import json, pathlib\npathlib.Path('{}.py').touch()\nprint(json.dumps({{'PYG': 'owned'}}))\n",
        pwn.display()
    );
    w.write("proj/.agents/env", "GREETING=hello\n");
    w.write("proj/.agents/env.py", good_py);
    w.write("proj/.agents/swap/good.env", "GREETING=hello\n");
    w.write("proj/.agents/swap/good.py", good_py);
    w.write(
        "proj/.agents/swap/bad.env",
        format!("touch '{}'\nexport GREETING=owned\n", pwn.display()),
    );
    w.write("proj/.agents/swap/bad.py", &bad_py);
    let swap = |from_env: &str, from_py: &str| {
        format!(
            "_s=\"$AGENTS_PROJECT_ROOT/.agents\"\ncp \"$_s/swap/{from_env}\" \"$_s/env\"\ncp \"$_s/swap/{from_py}\" \"$_s/env.py\"\nunset _s\n"
        )
    };
    w.write("proj/.agents/pre.env", swap("bad.env", "bad.py"));
    w.write("proj/.agents/local.env", swap("good.env", "good.py"));
    let o = run(w.cmd(&["allow"]), 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    for (what, mut c) in [
        (
            "env --require-trust",
            w.cmd(&["env", "--require-trust", "--format", "json", "--diff"]),
        ),
        (
            "hook bash --load",
            w.cmd(&["hook", "bash", "--load", "--pid", "1"]),
        ),
    ] {
        c.env("AGENTENV_HOOK_CACHE", "0").env("PWD", w.p("proj"));
        let o = run(c, 60);
        assert_eq!(o.code, Some(0), "{what}: {}", o.stderr);
        let out = stdout_text(&o);
        assert!(!pwn.exists(), "{what}: the swapped-in env ran");
        assert!(
            !w.p("PWNED.py").exists(),
            "{what}: the swapped-in env.py ran"
        );
        assert!(out.contains("hello"), "{what}: {out}");
        assert!(!out.contains("owned"), "{what}: {out}");
        // Swapped back: the store is what was allowed.
        let s = run(w.cmd(&["status", "--format", "json"]), 60).json();
        assert_eq!(s["stores"][2]["trust"], "allowed", "{what}: {s}");
    }
}

/// #22.2: a `.agents` that is another user's symlink to the victim's
/// allowed store is refused (it would borrow that store's trust, and PATH
/// would go through a link the other user can re-point). The victim's own
/// link is judged by the store it resolves to, and PATH and
/// AGENTS_PROJECT_ROOT hold resolved paths only.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn a_symlinked_agents_is_judged_by_what_it_is() {
    if !need_root("symlinked .agents") {
        return;
    }
    let w = open_tree();
    let vhome = w.p("vhome");
    w.write("vhome/good/.agents/env", "GOOD=1\n");
    w.t.mkdir("vhome/good/.agents/bin");
    let store = w.p("vhome/good/.agents");
    w.t.mkdir("evil");
    w.link(&store, "evil/.agents");
    w.t.mkdir("mine");
    w.link(&store, "mine/.agents");
    chown_r(&vhome, VICTIM);
    chown_r(&w.p("mine"), VICTIM);
    chown_r(&w.p("evil"), ATTACKER);
    let o = run(
        as_uid(VICTIM, &in_dir(&w, &vhome, &vhome, &["allow", "good"])),
        60,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);

    let load = |dir: &str| {
        run(
            as_uid(
                VICTIM,
                &in_dir(
                    &w,
                    &vhome,
                    &w.p(dir),
                    &["hook", "bash", "--load", "--pid", "1"],
                ),
            ),
            60,
        )
    };
    let o = load("evil");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let out = stdout_text(&o);
    assert!(
        !out.contains("GOOD"),
        "another user's link borrowed trust: {out}"
    );
    assert!(
        o.stderr.contains("symbolic link owned by another user"),
        "{}",
        o.stderr
    );
    // Neither PATH nor AGENTS_PROJECT_ROOT nor the watch list keeps the link.
    let evil = w.p("evil").display().to_string();
    assert!(
        !out.lines()
            .any(|l| l.starts_with("export ") && l.contains(&evil)),
        "{out}"
    );
    assert!(!out.contains(&format!("{evil}/.agents")), "{out}");

    // `allow` there refuses the link too (it would allow whatever it
    // points to at the moment).
    let o = run(
        as_uid(VICTIM, &in_dir(&w, &vhome, &w.p("evil"), &["allow"])),
        60,
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("owned by another user"), "{}", o.stderr);

    let o = load("mine");
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let out = stdout_text(&o);
    assert!(out.contains("export GOOD='1'"), "{out} {}", o.stderr);
    assert!(
        out.contains(&format!("{}/bin", store.display())),
        "PATH holds the resolved store: {out}"
    );
    assert!(
        !out.contains(&format!("{}/.agents", w.p("mine").display())),
        "PATH or the root went through the link: {out}"
    );
    assert!(
        out.contains(&format!(
            "export AGENTS_PROJECT_ROOT='{}'",
            w.p("mine").display()
        )),
        "{out}"
    );
}

/// Source a bash script with the hook installed, in `dir`, as `uid` (None:
/// as the test's user); stdout and stderr.
fn hook_script(w: &W, home: &Path, dir: &Path, body: &str) -> Out {
    let script = format!(
        "eval \"$('{}' hook bash)\"\n{body}\n",
        support::agentenv_bin().display()
    );
    let mut c = in_dir(w, home, dir, &[]);
    let mut b = Command::new("bash");
    b.arg("--norc").arg("-c").arg(script).env_clear();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            b.env(k, v);
        }
    }
    b.current_dir(dir).stdin(Stdio::null());
    c = b;
    run(c, 120)
}

/// #22.3: `bin/` and `lib/` are part of what was allowed: a file added to
/// `bin/`, or changed in place under `lib/`, after `allow` makes the next
/// prompt reload and block the store (PATH and PYTHONPATH lose its dirs),
/// and a `bin/` missing at allow time is not put on PATH by the hook.
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn bin_and_lib_changes_after_allow_take_no_effect() {
    let w = W::new();
    let home = w.p("home");
    w.t.exe("proj/.agents/bin/tool", "#!/bin/sh\necho tool\n");
    w.write("proj/.agents/lib/helper.py", "V = 1\n");
    w.write("proj/.agents/env", "X=1\n");
    let o = hook_script(
        &w,
        &home,
        &w.p("proj"),
        "A=\"$_agentenv_bin\"\n\"$A\" allow >/dev/null\n_agentenv_hook\n\
         echo \"PATH1=$PATH\"; echo \"PYTHONPATH1=${PYTHONPATH-}\"\n\
         printf '#!/bin/sh\\necho PWNED-ls\\n' > .agents/bin/ls; chmod 755 .agents/bin/ls\n\
         _agentenv_hook\necho \"PATH2=$PATH\"\nls /\n\
         rm .agents/bin/ls; \"$A\" allow >/dev/null; _agentenv_hook\n\
         echo \"PYTHONPATH3=${PYTHONPATH-}\"\n\
         printf 'V = 2\\n' > .agents/lib/helper.py\n\
         _agentenv_hook\necho \"PYTHONPATH4=${PYTHONPATH-}\"",
    );
    let out = stdout_text(&o);
    let bin = w.p("proj/.agents/bin").display().to_string();
    let lib = w.p("proj/.agents/lib").display().to_string();
    let line = |k: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_else(|| panic!("no {k} in {out} / {}", o.stderr))
            .to_string()
    };
    assert!(line("PATH1").contains(&bin), "{out}");
    assert!(line("PYTHONPATH1").contains(&lib), "{out}");
    assert!(
        !out.contains("PWNED-ls"),
        "a bin/ added after allow ran: {out}"
    );
    assert!(!line("PATH2").contains(&bin), "{out}");
    assert!(
        o.stderr.contains("changed since it was allowed"),
        "{}",
        o.stderr
    );
    assert!(line("PYTHONPATH3").contains(&lib), "{out}");
    assert!(
        !line("PYTHONPATH4").contains(&lib),
        "a lib/ file changed in place stays on PYTHONPATH: {out}"
    );

    // No bin/ at allow time: the hook does not put it on PATH.
    let w = W::new();
    w.write("proj/.agents/env", "X=1\n");
    let o = hook_script(
        &w,
        &w.p("home"),
        &w.p("proj"),
        "\"$_agentenv_bin\" allow >/dev/null\n_agentenv_hook\necho \"X=${X-} PATH=$PATH\"",
    );
    let out = stdout_text(&o);
    assert!(out.contains("X=1 "), "{out} {}", o.stderr);
    assert!(
        !out.contains(&*w.p("proj/.agents/bin").to_string_lossy()),
        "a missing bin/ of a gated store is on PATH: {out}"
    );
}

/// #22.5: the trust digest is bounded: a link to /proc/self/pagemap (a
/// "regular file" of size 0 that reads for hundreds of GiB) and a huge
/// sparse file are refused by name, and `allow`, `status`, the hook and
/// `--require-trust` all finish; a FIFO is digested by kind, never opened.
#[test]
fn the_trust_digest_is_bounded_and_names_the_odd_file() {
    for (name, make) in [("pagemap", 0u8), ("huge", 1u8)] {
        let w = W::new();
        w.write("proj/.agents/env", "A=1\n");
        w.fifo("proj/.agents/a-fifo");
        match make {
            0 => {
                w.link("/proc/self/pagemap", &format!("proj/.agents/{name}"));
            }
            _ => {
                w.sparse(&format!("proj/.agents/{name}"), 64 << 30);
            }
        }
        let o = run(w.cmd(&["allow"]), 120);
        assert_eq!(o.code, Some(1), "{name}: allow: {}", o.stderr);
        assert!(o.stderr.contains(name), "{name}: allow: {}", o.stderr);
        let mut hook = w.cmd(&["hook", "bash", "--load", "--pid", "1"]);
        hook.env("PWD", w.p("proj"));
        let mut gated = w.cmd(&["env", "--require-trust", "--format", "json", "--diff"]);
        gated.env("PWD", w.p("proj"));
        for (what, c) in [
            ("status", w.cmd(&["status"])),
            ("hook", hook),
            ("env --require-trust", gated),
        ] {
            let o = run(c, 120);
            assert_eq!(o.code, Some(0), "{name}: {what}: {}", o.stderr);
            assert!(!stdout_text(&o).contains("A='1'"), "{name}: {what}");
        }
    }
    // A FIFO alone: allowed, never opened.
    let w = W::new();
    w.write("proj/.agents/env", "A=1\n");
    w.fifo("proj/.agents/a-fifo");
    let o = run(w.cmd(&["allow"]), 120);
    assert_eq!(o.code, Some(0), "fifo: {}", o.stderr);
}

/// #22.7: with a relative or empty HOME the project store the hook refuses
/// is not run as the user store either.
#[test]
fn a_relative_home_never_runs_the_refused_project_store() {
    for home in [".", "./", ""] {
        let w = W::new();
        let ran = w.p("RAN");
        w.write(
            "proj/.agents/env",
            format!("touch '{}'\nexport PROJ_CODE=ran\n", ran.display()),
        );
        for (what, args) in [
            ("hook", &["hook", "bash", "--load", "--pid", "9"][..]),
            (
                "env --require-trust",
                &["env", "--require-trust", "--format", "json", "--diff"][..],
            ),
        ] {
            let mut c = w.cmd(args);
            c.env("HOME", home).env("PWD", w.p("proj"));
            let o = run(c, 60);
            assert!(
                !stdout_text(&o).contains("PROJ_CODE"),
                "HOME={home:?} {what}: {}",
                stdout_text(&o)
            );
            assert!(!ran.exists(), "HOME={home:?} {what}: the store ran");
        }
    }
}

/// #22.10: an `env.py` importing a sibling module does not leave a
/// `__pycache__` that turns the allowed store into "changed".
#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn pycache_does_not_turn_an_allowed_store_changed() {
    let w = W::new();
    w.write(
        "proj/.agents/env.py",
        "import json, helper\nprint(json.dumps({'H': helper.v}))\n",
    );
    w.write("proj/.agents/helper.py", "v = '1'\n");
    assert_eq!(run(w.cmd(&["allow"]), 60).code, Some(0));
    for i in 0..2 {
        let o = w.env(&["--require-trust"]);
        assert!(
            !o.stderr.contains("changed"),
            "run {i}: {} ({:?})",
            o.stderr,
            std::fs::read_dir(w.p("proj/.agents"))
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect::<Vec<_>>()
        );
        assert_eq!(o.json()["H"], "1", "run {i}");
    }
    assert!(!w.p("proj/.agents/__pycache__").exists());
}

/// #22.16: a user store owned by someone else (root with another user's
/// HOME, as `sudo -E` leaves it) is not run, and nothing is created in it.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn a_user_store_owned_by_another_user_is_not_run() {
    if !need_root("foreign user store") {
        return;
    }
    let w = open_tree();
    let ran = w.p("RAN");
    let vhome = w.p("vhome");
    w.write(
        "vhome/.agents/env",
        format!("touch '{}'\nexport U_CODE=ran\n", ran.display()),
    );
    chown_r(&vhome, VICTIM);
    w.t.mkdir("elsewhere");
    for args in [
        &["env", "--format", "json", "--diff", "--cache"][..],
        &["hook", "bash", "--load", "--pid", "1"][..],
    ] {
        // As root, HOME pointing at the victim's home.
        let mut c = in_dir(&w, &vhome, &w.p("elsewhere"), args);
        c.env_remove("AGENTENV_HOOK_CACHE");
        let o = run(c, 60);
        assert!(!stdout_text(&o).contains("U_CODE"), "{args:?}: ran");
        assert!(!ran.exists(), "{args:?}: ran");
        assert!(
            o.stderr.contains("owned by another user"),
            "{args:?}: {}",
            o.stderr
        );
        assert!(
            !vhome.join(".agents/.cache").exists(),
            "{args:?} left .cache"
        );
    }
    // No store yet: root does not create one in the victim's home.
    let bare = w.t.mkdir("vhome2");
    chown_r(&bare, VICTIM);
    let o = run(
        in_dir(
            &w,
            &bare,
            &w.p("elsewhere"),
            &["env", "--format", "json", "--cache"],
        ),
        60,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        !bare.join(".agents").exists(),
        "root created a store in {}",
        bare.display()
    );
    // The owner runs it.
    let o = run(
        as_uid(
            VICTIM,
            &in_dir(
                &w,
                &vhome,
                &w.p("elsewhere"),
                &["env", "--format", "json", "--diff"],
            ),
        ),
        60,
    );
    assert!(stdout_text(&o).contains("U_CODE"), "{}", o.stderr);
}
