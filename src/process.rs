//! The only place that starts child processes.
//!
//! [`run_captured`] runs a layer's child (an `env.py`, bash) in its own
//! process group with a timeout and an output cap: on expiry the whole group
//! is killed. Its stderr is discarded, never shown (it may hold secrets).
//! [`exec`] replaces the current process with a command in a given
//! environment, mapping "not found" to 127 and "cannot execute" to 126.

use crate::core::Env;
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Default timeout for layer children (seconds).
pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
/// Largest stdout a layer child may produce.
pub const OUTPUT_LIMIT: usize = 16 * 1024 * 1024;

/// A finished child.
#[derive(Debug)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
}

impl Captured {
    /// The exit code, or 128+signal for a child killed by a signal.
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .or_else(|| self.status.signal().map(|s| 128 + s))
            .unwrap_or(1)
    }
}

/// Why a child did not give a result.
#[derive(Debug)]
pub enum RunError {
    /// It could not be started.
    Spawn(io::Error),
    /// It did not finish (including closing stdout) within the timeout.
    Timeout,
    /// It wrote more than the output limit.
    TooLarge,
    /// Reading its output or waiting for it failed.
    Io(io::Error),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Spawn(e) => write!(f, "cannot start: {}", io_kind(e)),
            RunError::Timeout => f.write_str("timed out"),
            RunError::TooLarge => write!(f, "output over {} MiB", OUTPUT_LIMIT >> 20),
            RunError::Io(e) => write!(f, "i/o error: {}", io_kind(e)),
        }
    }
}

/// An io error's kind as text (never the OS message with a path in it, which
/// is already named by the caller).
pub fn io_kind(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let s = e.to_string();
            // std formats as "<description> (os error N)".
            match s.rfind(" (os error") {
                Some(i) => s[..i].to_string(),
                None => format!("os error {code}"),
            }
        }
        None => match crate::fsutil::input_error(e) {
            Some(refused) => refused.to_string(),
            None => format!("{:?}", e.kind()),
        },
    }
}

static SPAWNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many children [`run_captured`] has started in this process. Code
/// that memoises file-system lookups (the native plain-file evaluator's
/// search for `env` on PATH) treats a change as "a child may have changed
/// the file system".
pub fn spawn_generation() -> u64 {
    SPAWNS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Run `cmd` with stdout captured (up to `limit` bytes), stderr discarded,
/// stdin inherited, in its own process group, for at most `timeout`.
pub fn run_captured(
    mut cmd: Command,
    timeout: Duration,
    limit: usize,
) -> Result<Captured, RunError> {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    SPAWNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let mut out = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let res = (&mut out)
            .take(limit as u64 + 1)
            .read_to_end(&mut buf)
            .map(|_| buf);
        // Drop the pipe before reporting so an over-long writer gets EPIPE.
        drop(out);
        let _ = tx.send(res);
    });
    let kill = |child: &mut std::process::Child| {
        let pid = rustix::process::Pid::from_child(child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = child.kill();
        let _ = child.wait();
    };
    let read = match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(_) => {
            kill(&mut child);
            // Not joined: a descendant that left the group (setsid) may
            // still hold the pipe; the reader ends when it closes, or with
            // this process.
            drop(reader);
            return Err(RunError::Timeout);
        }
    };
    let _ = reader.join();
    let stdout = match read {
        Ok(b) => b,
        Err(e) => {
            kill(&mut child);
            return Err(RunError::Io(e));
        }
    };
    if stdout.len() > limit {
        kill(&mut child);
        return Err(RunError::TooLarge);
    }
    // stdout is closed; the child should be exiting. Still bound the wait.
    // The exit usually follows within microseconds: poll with a backoff
    // from 10 µs up to 200 µs rather than always sleeping 200 µs (which
    // cost every layer about a quarter of a millisecond).
    let deadline = std::time::Instant::now() + timeout;
    let mut pause = Duration::from_micros(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Captured { status, stdout }),
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_micros(200));
            }
            Ok(None) => {
                kill(&mut child);
                return Err(RunError::Timeout);
            }
            Err(e) => return Err(RunError::Io(e)),
        }
    }
}

/// Linux's limit on one `NAME=value` string passed to `execve`.
pub const MAX_ARG_STRLEN: usize = 32 * 4096;

/// Check an environment before `exec`: a string over the per-string limit
/// fails with the variable's name (never its value).
pub fn check_exec_env(env: &Env) -> Result<(), String> {
    for (k, v) in env {
        // `execve` takes `NAME=value\0` strings: a NUL would cut the
        // string, an `=` in the name would move the split (`A=B` + `x`
        // would reach the child as `A` = `B=x`), an empty name is no name.
        let name = k.to_string_lossy();
        if k.is_empty() || k.as_encoded_bytes().contains(&b'=') {
            return Err(format!(
                "variable name {name:?} cannot be passed in an environment (empty or containing '=')"
            ));
        }
        if k.as_encoded_bytes().contains(&0) || v.as_encoded_bytes().contains(&0) {
            return Err(format!(
                "variable {name:?} contains a NUL byte, which an environment cannot carry"
            ));
        }
        if k.len() + v.len() + 2 > MAX_ARG_STRLEN {
            return Err(format!(
                "variable {} is {} bytes, over the {} KiB limit for one environment string",
                k.to_string_lossy(),
                k.len() + v.len() + 1,
                MAX_ARG_STRLEN / 1024
            ));
        }
    }
    Ok(())
}

/// Linux's limit on everything `execve` copies (argument and environment
/// strings plus their pointers): a quarter of the stack soft limit, at most
/// 6 MiB and at least 128 KiB (`fs/exec.c`).
pub fn exec_total_limit() -> usize {
    const CAP: u64 = 6 << 20; // _STK_LIM / 4 * 3
    let stack = rustix::process::getrlimit(rustix::process::Resource::Stack).current;
    let limit = stack.map_or(CAP, |c| (c / 4).min(CAP));
    (limit as usize).max(MAX_ARG_STRLEN)
}

/// Check the whole `execve` payload against `limit` (see
/// [`exec_total_limit`]): over it, the message names the largest variable
/// and the sizes, never a value. The program path is counted at
/// `PATH_MAX` so a PATH lookup cannot tip it over.
pub fn check_exec_total(
    program: &OsStr,
    args: &[std::ffi::OsString],
    env: &Env,
    limit: usize,
) -> Result<(), String> {
    const PTR: usize = std::mem::size_of::<usize>();
    let argv: usize = program.len() + 1 + args.iter().map(|a| a.len() + 1).sum::<usize>();
    let envp: usize = env.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
    let total = 4096 + argv + envp + (1 + args.len() + env.len()) * PTR;
    if total <= limit {
        return Ok(());
    }
    let largest = env
        .iter()
        .max_by_key(|(k, v)| (k.len() + v.len(), std::cmp::Reverse(*k)));
    let hint = match largest {
        Some((k, v)) => format!(
            "; the largest variable is {} ({} bytes)",
            k.to_string_lossy(),
            k.len() + v.len() + 1
        ),
        None => String::new(),
    };
    Err(format!(
        "the environment ({} variables, {envp} bytes) and arguments ({argv} bytes) are over the {} KiB limit of execve{hint}",
        env.len(),
        limit / 1024
    ))
}

/// Replace this process with `program args…` in exactly `env`.
/// Returns only on failure, with the exit code to use (127 not found,
/// 126 cannot execute) after printing a message.
pub fn exec(program: &OsStr, args: &[std::ffi::OsString], env: &Env) -> i32 {
    if let Err(msg) =
        check_exec_env(env).and_then(|()| check_exec_total(program, args, env, exec_total_limit()))
    {
        crate::error!("cannot run {}: {msg}", program.to_string_lossy());
        return 126;
    }
    use std::io::Write;
    let _ = io::stdout().flush();
    let mut cmd = Command::new(program);
    cmd.args(args).env_clear().envs(env);
    // PATH lookup uses the child's PATH (the assembled one), as a shell would.
    let err = cmd.exec();
    let code = match err.kind() {
        io::ErrorKind::NotFound => 127,
        _ => 126,
    };
    let what = if code == 127 {
        "command not found".to_string()
    } else {
        io_kind(&err)
    };
    crate::error!("cannot run {}: {what}", program.to_string_lossy());
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_env_refuses_nul_and_bad_names_naming_the_variable() {
        let one = |k: &str, v: &str| {
            let mut e = Env::new();
            e.insert(k.into(), v.into());
            check_exec_env(&e)
        };
        assert!(one("OK", "fine").is_ok());
        let m = one("N", "se\0cret").unwrap_err();
        assert!(
            m.contains("\"N\"") && m.contains("NUL") && !m.contains("se"),
            "{m}"
        );
        let m = one("A=B", "x").unwrap_err();
        assert!(m.contains("\"A=B\"") && m.contains("'='"), "{m}");
        assert!(one("", "x").is_err());
    }

    #[test]
    fn exec_total_names_the_largest_variable_not_its_value() {
        let mut env = Env::new();
        env.insert("SMALL".into(), "x".into());
        env.insert("BIG".into(), "s3cr3t".repeat(100).into());
        let args = vec![std::ffi::OsString::from("a")];
        assert!(check_exec_total(OsStr::new("true"), &args, &env, 1 << 20).is_ok());
        let msg = check_exec_total(OsStr::new("true"), &args, &env, 4096).unwrap_err();
        assert!(msg.contains("largest variable is BIG (604 bytes)"), "{msg}");
        assert!(msg.contains("over the 4 KiB limit"), "{msg}");
        assert!(!msg.contains("s3cr3t"));
        let l = exec_total_limit();
        assert!((MAX_ARG_STRLEN..=6 << 20).contains(&l));
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn captures_stdout_and_status() {
        let r = run_captured(sh("printf hi; exit 3"), Duration::from_secs(5), 100).unwrap();
        assert_eq!(r.stdout, b"hi");
        assert_eq!(r.code(), 3);
    }

    #[test]
    fn timeout_kills_the_group() {
        let t = std::time::Instant::now();
        let r = run_captured(sh("sleep 30 & sleep 30"), Duration::from_millis(300), 100);
        assert!(matches!(r, Err(RunError::Timeout)));
        assert!(t.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn timeout_returns_while_an_escaped_descendant_holds_stdout() {
        // setsid leaves the group, so the kill misses it; the pipe stays
        // open for 20 s, yet the call returns at the timeout.
        let t = std::time::Instant::now();
        let r = run_captured(
            sh("setsid sleep 20 & echo x"),
            Duration::from_millis(300),
            100,
        );
        assert!(matches!(r, Err(RunError::Timeout)));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn output_over_the_limit_fails() {
        let r = run_captured(sh("yes | head -c 5000"), Duration::from_secs(5), 1000);
        assert!(matches!(r, Err(RunError::TooLarge)));
    }

    #[test]
    fn signal_death_maps_to_128_plus() {
        let r = run_captured(sh("kill -9 $$"), Duration::from_secs(5), 100).unwrap();
        assert_eq!(r.code(), 137);
    }
}
