//! The test kit: a scratch tree written as raw-string files, one builder
//! for an `agentenv` invocation (env, args, cwd, stdin), and one checked
//! result (status, stdout, stderr).
//!
//! ```ignore
//! let t = Tree::session().file("home/.agents/env", "A=1\n");
//! t.agentenv(["env", "--format", "json", "--diff"])
//!     .stdout_has(r#""A": "1""#)
//!     .stderr("")
//!     .run();
//! ```
//!
//! A run expects exit 0 unless told otherwise ([`Run::status`],
//! [`Run::any_status`]) and checks every expectation before it fails, so one
//! failure names all that went wrong, with the command and its output.
//!
//! Paths: the tree's root is canonical, and in the output it may be written
//! `$W` in an expectation (`stderr_has("store user: $W/home/.agents")`):
//! an expectation holds if it holds for the raw output or for the output with
//! the root spelled `$W`.

use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A scratch directory that lives as long as the value and every [`Run`]
/// made from it.
pub struct Tree {
    dir: Arc<tempfile::TempDir>,
    root: PathBuf,
}

impl Tree {
    /// An empty scratch directory (its path canonical).
    pub fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Tree {
            dir: Arc::new(dir),
            root,
        }
    }

    /// The session layout of the dotagents oracle recipe: `home/` (HOME) and
    /// `proj/` (the working directory of [`Tree::agentenv`]), both empty.
    pub fn session() -> Tree {
        Tree::new().dir("home").dir("proj")
    }

    /// A fullsend directory with `harness/` inside (the default
    /// FULLSEND_DIR of a harness file in `harness/` is this root).
    pub fn fullsend() -> Tree {
        Tree::new().dir("harness")
    }

    /// The root (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as text.
    pub fn w(&self) -> &str {
        self.root.to_str().unwrap()
    }

    /// `rel` under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// `rel` under the root, as text (for an argument).
    pub fn arg(&self, rel: &str) -> String {
        self.path(rel).to_str().unwrap().to_string()
    }

    /// Builder form of [`Tree::write`].
    pub fn file(self, rel: &str, body: impl AsRef<[u8]>) -> Tree {
        self.write(rel, body);
        self
    }

    /// Builder form of [`Tree::mkdir`].
    pub fn dir(self, rel: &str) -> Tree {
        self.mkdir(rel);
        self
    }

    /// Write `body` at `rel`, creating parent directories; returns the path.
    /// A file inside a store (`.agents/`) is made 0600, as `agentenv set`
    /// writes one: a readable store file with secrets is a warning.
    pub fn write(&self, rel: &str, body: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, body).unwrap();
        if rel.starts_with(".agents/") || rel.contains("/.agents/") {
            fs::set_permissions(&p, fs::Permissions::from_mode(0o600)).unwrap();
        }
        p
    }

    /// Write an executable (mode 0755) at `rel`; returns the path.
    pub fn exe(&self, rel: &str, body: impl AsRef<[u8]>) -> PathBuf {
        let p = self.write(rel, body);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// Create the directory `rel` (and its parents); returns the path.
    pub fn mkdir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(&p).unwrap();
        p
    }

    /// The text of the file at `rel`.
    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel)).unwrap()
    }

    /// `agentenv ARGS` in the reference's session environment
    /// ([`super::session_cmd`]: cleared env, `HOME=$W/home`, `PATH=/usr/bin:/bin`,
    /// `LANG=C.UTF-8`, a pinned `AGENTS_PYTHON`, `AGENTS_SYSTEM_ROOT=$W/no-system`),
    /// run in `$W/proj`.
    pub fn agentenv<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Run::new(super::session_cmd(&self.root), &self.root)
            .keeping(self)
            .args(args)
    }

    /// `agentenv ARGS` with a cleared environment but the caller's `PATH`,
    /// run in the root (the harness and launch commands' world).
    pub fn host<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut c = Command::new(super::agentenv_bin());
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(&self.root);
        Run::new(c, &self.root).keeping(self).args(args)
    }

    /// Any program, environment as the caller's, run in the root.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Run {
        let mut c = Command::new(program);
        c.current_dir(&self.root);
        Run::new(c, &self.root).keeping(self)
    }
}

/// `agentenv ARGS` with the caller's environment and working directory
/// (the command line as a whole: help, version, completions).
pub fn agentenv<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Run::new(Command::new(super::agentenv_bin()), Path::new("")).args(args)
}

enum Check {
    Is(String),
    Has(String),
    Lacks(String),
}

/// One invocation to run, with what it must show.
pub struct Run {
    cmd: Command,
    /// The tree it runs in, kept alive as long as the run.
    _tree: Option<Arc<tempfile::TempDir>>,
    root: PathBuf,
    stdin: Option<Vec<u8>>,
    status: Option<i32>,
    stdout: Vec<Check>,
    stderr: Vec<Check>,
    deadline: Option<Duration>,
}

impl Run {
    fn new(cmd: Command, root: &Path) -> Run {
        Run {
            cmd,
            _tree: None,
            root: root.to_path_buf(),
            stdin: None,
            status: Some(0),
            stdout: Vec::new(),
            stderr: Vec::new(),
            deadline: None,
        }
    }

    fn keeping(mut self, t: &Tree) -> Run {
        self._tree = Some(Arc::clone(&t.dir));
        self
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Run {
        self.cmd.arg(a);
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.cmd.args(args);
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Run {
        self.cmd.env(k, v);
        self
    }

    pub fn envs<I, K, V>(mut self, vars: I) -> Run
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.cmd.envs(vars);
        self
    }

    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> Run {
        self.cmd.env_remove(k);
        self
    }

    /// Run in `dir` (absolute, or relative to the tree's root).
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Run {
        let d = self.root.join(dir);
        self.cmd.current_dir(d);
        self
    }

    /// Feed `input` on stdin (default: no stdin at all, `/dev/null`).
    pub fn stdin(mut self, input: impl AsRef<[u8]>) -> Run {
        self.stdin = Some(input.as_ref().to_vec());
        self
    }

    /// Anything else on the command (a pre-exec hook, an argument list built
    /// elsewhere).
    pub fn with(mut self, f: impl FnOnce(&mut Command)) -> Run {
        f(&mut self.cmd);
        self
    }

    /// The exit code it must end with (default 0).
    pub fn status(mut self, code: i32) -> Run {
        self.status = Some(code);
        self
    }

    /// Any exit (a signal included).
    pub fn any_status(mut self) -> Run {
        self.status = None;
        self
    }

    /// Kill it and fail if it has not exited within `d`.
    pub fn deadline(mut self, d: Duration) -> Run {
        self.deadline = Some(d);
        self
    }

    /// Stdout is exactly `s`.
    pub fn stdout(mut self, s: impl Into<String>) -> Run {
        self.stdout.push(Check::Is(s.into()));
        self
    }

    /// Stderr is exactly `s` (`""`: nothing on stderr).
    pub fn stderr(mut self, s: impl Into<String>) -> Run {
        self.stderr.push(Check::Is(s.into()));
        self
    }

    pub fn stdout_has(mut self, s: impl Into<String>) -> Run {
        self.stdout.push(Check::Has(s.into()));
        self
    }

    pub fn stderr_has(mut self, s: impl Into<String>) -> Run {
        self.stderr.push(Check::Has(s.into()));
        self
    }

    pub fn stdout_lacks(mut self, s: impl Into<String>) -> Run {
        self.stdout.push(Check::Lacks(s.into()));
        self
    }

    pub fn stderr_lacks(mut self, s: impl Into<String>) -> Run {
        self.stderr.push(Check::Lacks(s.into()));
        self
    }

    /// A canary: `secret` is on neither stdout nor stderr.
    pub fn secret(self, secret: &str) -> Run {
        self.stdout_lacks(secret).stderr_lacks(secret)
    }

    /// The command itself, for a test that must hold the child (its pid,
    /// signals); the expectations are dropped.
    pub fn into_command(self) -> Command {
        self.cmd
    }

    /// Run it and check every expectation; panics naming each one that
    /// failed, with the command, its status and its output.
    pub fn run(self) -> Ran {
        let Run {
            mut cmd,
            _tree,
            root,
            stdin,
            status,
            stdout,
            stderr,
            deadline,
        } = self;
        let what = describe(&cmd);
        let ran = spawn(&mut cmd, stdin, deadline, &what, &root);
        let mut failures = Vec::new();
        if let Some(want) = status {
            if ran.status != Some(want) {
                failures.push(format!("exit status {:?}, expected {want}", ran.status));
            }
        }
        check(
            "stdout",
            &ran.stdout,
            &ran.stdout_w(),
            &stdout,
            &mut failures,
        );
        check(
            "stderr",
            &ran.stderr,
            &ran.stderr_w(),
            &stderr,
            &mut failures,
        );
        if !failures.is_empty() {
            panic!(
                "{what}\n{}\n--- status: {:?}\n--- stdout:\n{}\n--- stderr:\n{}",
                failures.join("\n"),
                ran.status,
                ran.stdout,
                ran.stderr
            );
        }
        ran
    }
}

fn check(name: &str, raw: &str, norm: &str, checks: &[Check], failures: &mut Vec<String>) {
    for c in checks {
        match c {
            Check::Is(s) if raw != s && norm != s => {
                failures.push(format!("{name} is not exactly {s:?}"));
            }
            Check::Has(s) if !raw.contains(s.as_str()) && !norm.contains(s.as_str()) => {
                failures.push(format!("{name} lacks {s:?}"));
            }
            Check::Lacks(s) if raw.contains(s.as_str()) || norm.contains(s.as_str()) => {
                failures.push(format!("{name} holds {s:?}"));
            }
            _ => {}
        }
    }
}

fn describe(cmd: &Command) -> String {
    let mut s = String::from("$");
    for part in std::iter::once(cmd.get_program()).chain(cmd.get_args()) {
        s.push(' ');
        s.push_str(&part.to_string_lossy());
    }
    s
}

fn spawn(
    cmd: &mut Command,
    stdin: Option<Vec<u8>>,
    deadline: Option<Duration>,
    what: &str,
    root: &Path,
) -> Ran {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let feeder = stdin.map(|input| {
        let mut pipe = child.stdin.take().unwrap();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        })
    });
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out_pipe.read_to_end(&mut b);
        b
    });
    let err = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err_pipe.read_to_end(&mut b);
        b
    });
    let status = match deadline {
        None => child.wait().unwrap(),
        Some(d) => {
            let t = Instant::now();
            loop {
                if let Some(s) = child.try_wait().unwrap() {
                    break s;
                }
                if t.elapsed() > d {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("{what}: still running after {d:?}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout_bytes = out.join().unwrap();
    let stderr_bytes = err.join().unwrap();
    Ran {
        status: status.code(),
        stdout: String::from_utf8_lossy(&stdout_bytes).into_owned(),
        stderr: String::from_utf8_lossy(&stderr_bytes).into_owned(),
        stdout_bytes,
        root: root.to_str().unwrap().to_string(),
    }
}

/// What a [`Run`] showed (already checked).
pub struct Ran {
    pub status: Option<i32>,
    /// Stdout, lossily decoded.
    pub stdout: String,
    /// Stderr, lossily decoded.
    pub stderr: String,
    pub stdout_bytes: Vec<u8>,
    root: String,
}

impl Ran {
    /// Stdout parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout_bytes)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Stdout, with the tree's root spelled `$W`, parsed as JSON.
    pub fn json_w(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout_w())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout))
    }

    /// Stdout with the tree's root spelled `$W`.
    pub fn stdout_w(&self) -> String {
        self.spell_root(&self.stdout)
    }

    /// Stderr with the tree's root spelled `$W`.
    pub fn stderr_w(&self) -> String {
        self.spell_root(&self.stderr)
    }

    fn spell_root(&self, text: &str) -> String {
        if self.root.is_empty() {
            text.to_string()
        } else {
            text.replace(&self.root, "$W")
        }
    }
}
