//! The integration tests' kit: [`Tree`] (a scratch tree of raw-string
//! files), [`Run`] (one checked invocation), and the tools a test needs,
//! with skips that show (see `build.rs`).

mod kit;
pub use kit::{agentenv, Ran, Run, Tree};

use std::path::{Path, PathBuf};
use std::process::Command;

/// `true` when CI demands every optional tool (`AGENTENV_REQUIRE_ALL=1`).
pub fn require_all() -> bool {
    std::env::var_os("AGENTENV_REQUIRE_ALL").is_some_and(|v| v == "1")
}

/// Report a missing tool: a failure under `AGENTENV_REQUIRE_ALL=1`, else a
/// printed skip. Returns `false` so callers can `if !have(..) { return }`.
///
/// A test that needs a tool says so first with
/// `#[cfg_attr(missing = "zsh", ignore = "needs zsh")]` (`build.rs` sets the
/// cfg when the tool is not there at build time, never under
/// `AGENTENV_REQUIRE_ALL=1`), so `cargo test` lists it as ignored with the
/// reason. This runtime check is the fallback for a tool that went away
/// after the build, and for the part of a test that needs root.
///
/// The skip line is written to the process's stderr directly, not with
/// `eprintln!`: libtest captures the print macros of a passing test, so a
/// skip printed that way would vanish and the test would read as passed.
pub fn skip(what: &str, why: &str) -> bool {
    if require_all() {
        panic!("required tool missing: {what} ({why}); AGENTENV_REQUIRE_ALL=1 forbids skipping");
    }
    use std::io::Write;
    let line =
        format!("SKIPPED: {what}: {why} (set AGENTENV_REQUIRE_ALL=1 to make this a failure)\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    false
}

/// Find an executable on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// An executable on PATH, or a skip (see [`skip`]).
pub fn tool(name: &str) -> Option<PathBuf> {
    match which(name) {
        Some(p) => Some(p),
        None => {
            skip(name, "not on PATH");
            None
        }
    }
}

/// The test virtual environment (python-dotenv, PyYAML, dotagents-cli):
/// `$AGENTENV_TEST_VENV`, else `<repo>/.venv`.
pub fn venv() -> PathBuf {
    match std::env::var_os("AGENTENV_TEST_VENV") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv"),
    }
}

/// The venv's python, if it can import `module`; else a skip.
pub fn venv_python_with(module: &str) -> Option<PathBuf> {
    let py = venv().join("bin/python");
    let ok = py.is_file()
        && Command::new(&py)
            .args(["-c", &format!("import {module}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
    if ok {
        Some(py)
    } else {
        skip(
            &format!("python module {module}"),
            &format!("not importable from {}", py.display()),
        );
        None
    }
}

/// The oracle `dotagents` 0.8.2 from the venv, or a skip.
pub fn dotagents() -> Option<PathBuf> {
    let p = venv().join("bin/dotagents");
    if p.is_file() {
        Some(p)
    } else {
        skip("dotagents", &format!("{} not found", p.display()));
        None
    }
}

/// The agentenv binary under test.
pub fn agentenv_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_agentenv"))
}

/// The masking daemon's directory in `run` (its `$XDG_RUNTIME_DIR`).
pub fn masking_daemon_dir(run: &Path) -> Option<PathBuf> {
    std::fs::read_dir(run)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("agentenv-wrap-"))
        })
}

/// The pid the masking daemon in `run` wrote.
pub fn masking_daemon_pid(run: &Path) -> Option<u32> {
    let pid = std::fs::read_to_string(masking_daemon_dir(run)?.join("pid")).ok()?;
    pid.trim().parse().ok()
}

/// A copy of the binary at `to`, written by `cp` rather than by this
/// process: a file this test process held open for writing could be
/// inherited by a child another test thread forks at that moment, and
/// running the copy would then fail with "text file busy" (ETXTBSY).
pub fn copy_agentenv_bin(to: &Path) {
    let st = std::process::Command::new("cp")
        .arg(agentenv_bin())
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(st.success(), "cp of the binary to {}", to.display());
}

/// The interpreter store tests pin `AGENTS_PYTHON` to: `/usr/bin/python3`
/// (the reference's recipe), else the first `python3` on PATH.
pub fn pinned_python() -> PathBuf {
    let sys = PathBuf::from("/usr/bin/python3");
    if sys.is_file() {
        sys
    } else {
        which("python3").expect("python3 on PATH")
    }
}

/// `agentenv` in the deterministic session environment of the dotagents oracle
/// recipe: a cleared environment with `HOME=<w>/home`, `PATH=/usr/bin:/bin`,
/// `LANG=C.UTF-8`, a pinned `AGENTS_PYTHON`,
/// `AGENTS_SYSTEM_ROOT=<w>/no-system`, run in `<w>/proj`.
pub fn session_cmd(w: &Path) -> Command {
    let mut c = Command::new(agentenv_bin());
    c.env_clear()
        .env("HOME", w.join("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("AGENTS_PYTHON", pinned_python())
        .env("AGENTS_SYSTEM_ROOT", w.join("no-system"))
        .current_dir(w.join("proj"));
    c
}

/// SplitMix64: the one small deterministic generator the generated tests
/// share (any seed, including 0, gives a full-period sequence).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform-enough in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// `true` with the given probability in percent.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}
