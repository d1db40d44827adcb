//! The only place that starts child processes.
//!
//! [`run_captured`] runs a layer's child (an `env.py`, bash) in its own
//! process group with a timeout and an output cap: on expiry the whole group
//! is killed. Its stdin is `/dev/null`; its stderr is discarded, never shown
//! (it may hold secrets).
//! [`exec`] replaces the current process with a command in a given
//! environment, mapping "not found" to 127 and "cannot execute" to 126.
//! [`run_masked`] runs a command with its stdout and stderr each through
//! the masker (`--redact`), passing signals on and returning its status.

use crate::core::Env;
use crate::fsutil::io_kind;
use rustix::event::{PollFd, PollFlags};
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Default timeout for layer children (seconds).
pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
/// Largest stdout a layer child may produce.
pub const OUTPUT_LIMIT: usize = 16 * 1024 * 1024;

/// The timeout from `$AGENTS_ENV_TIMEOUT` or the default (with a warning
/// when the variable is not a usable number).
pub(crate) fn timeout_from_env(base: &Env, warnings: &mut Vec<String>) -> Duration {
    let default = Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS);
    match crate::core::get(base, "AGENTS_ENV_TIMEOUT") {
        None => default,
        Some(v) if v.is_empty() => default,
        Some(v) => match v.to_str().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(s) if s.is_finite() && s > 0.0 && s < 1e9 => Duration::from_secs_f64(s),
            _ => {
                warnings.push(format!(
                    "ignoring $AGENTS_ENV_TIMEOUT: not a positive number of seconds; using {} s",
                    DEFAULT_TIMEOUT_SECS
                ));
                default
            }
        },
    }
}

/// A finished child.
#[derive(Debug)]
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
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

/// Run `cmd` with stdout captured (up to `limit` bytes), stderr discarded,
/// stdin `/dev/null` (a layer must not consume input meant for `exec`'s
/// command, e.g. an MCP server's first message), in its own process group, for at most `timeout` (which
/// covers reading stdout to its end, even while a descendant that left the
/// group holds it open, and the child's exit). On expiry the group is
/// killed.
///
/// One thread reads stdout and notices the exit: `poll` on the stdout
/// pipe and on an exit notice ([`ExitWatch`]: a pidfd on Linux ≥ 5.3, else
/// a pipe a waiting thread closes when the child exits). No sleeping loop
/// on any path.
pub fn run_captured(cmd: Command, timeout: Duration, limit: usize) -> Result<Captured, RunError> {
    run_captured_with(cmd, timeout, limit, Watch::here())
}

/// How [`run_captured`] and [`run_masked`] learn of the child's exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Watch {
    /// A pidfd (Linux); a waiting thread where `pidfd_open` is refused.
    Pidfd,
    /// A waiting thread (the portable path: macOS, FreeBSD,
    /// `AGENTENV_PORTABLE=1`).
    Thread,
}

impl Watch {
    /// This platform's way.
    fn here() -> Watch {
        if crate::platform::portable() {
            Watch::Thread
        } else {
            Watch::Pidfd
        }
    }
}

/// Wait until child `pid` has exited, without reaping it (its pid stays
/// its own while signals may still be passed on).
fn wait_unreaped(pid: rustix::process::Pid) {
    while let Err(rustix::io::Errno::INTR) = rustix::process::waitid(
        rustix::process::WaitId::Pid(pid),
        rustix::process::WaitIdOptions::EXITED | rustix::process::WaitIdOptions::NOWAIT,
    ) {}
}

/// A readable-on-exit descriptor for a child that is not reaped yet.
enum ExitWatch {
    /// Linux's pidfd: readable once the child has exited.
    #[cfg(target_os = "linux")]
    Pidfd(std::os::fd::OwnedFd),
    /// The read end of a pipe whose write end a thread holds while it
    /// waits for the exit with `waitid(WEXITED | WNOWAIT)` (the child stays
    /// unreaped, so its pid stays its own); the pipe hangs up on exit.
    Thread {
        pipe: io::PipeReader,
        waiter: Option<std::thread::JoinHandle<()>>,
    },
}

impl ExitWatch {
    fn new(child: &std::process::Child, how: Watch) -> io::Result<ExitWatch> {
        let pid = rustix::process::Pid::from_child(child);
        #[cfg(target_os = "linux")]
        if how == Watch::Pidfd {
            if let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) {
                return Ok(ExitWatch::Pidfd(fd));
            }
        }
        let _ = how;
        let (pipe, notify) = io::pipe()?;
        let waiter = std::thread::Builder::new()
            .name("agentenv-wait".into())
            .spawn(move || {
                wait_unreaped(pid);
                drop(notify);
            })?;
        Ok(ExitWatch::Thread {
            pipe,
            waiter: Some(waiter),
        })
    }

    fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        match self {
            #[cfg(target_os = "linux")]
            ExitWatch::Pidfd(fd) => fd.as_fd(),
            ExitWatch::Thread { pipe, .. } => pipe.as_fd(),
        }
    }

    /// The child has exited (or was killed): let the waiting thread end
    /// before the child is reaped, so its `waitid` never sees another
    /// process under a reused pid.
    #[allow(irrefutable_let_patterns)] // one variant off Linux
    fn join(&mut self) {
        if let ExitWatch::Thread { waiter, .. } = self {
            if let Some(t) = waiter.take() {
                let _ = t.join();
            }
        }
    }
}

/// [`run_captured`] with the way of awaiting the exit chosen (tests take
/// both).
fn run_captured_with(
    mut cmd: Command,
    timeout: Duration,
    limit: usize,
    how: Watch,
) -> Result<Captured, RunError> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let deadline = Instant::now() + timeout;
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pipe = child.stdout.take().expect("stdout is piped");
    // Not yet reaped, so the pid is still this child's.
    let mut watch = match ExitWatch::new(&child, how) {
        Ok(w) => w,
        Err(e) => {
            drop(pipe);
            kill(&mut child, None);
            return Err(RunError::Io(e));
        }
    };
    let (stdout, exited_seen) = read_stdout(&mut child, pipe, &mut watch, deadline, limit)?;
    if !exited_seen {
        await_exit(&mut child, &mut watch, deadline)?;
    }
    watch.join();
    // It has exited: `wait` reaps it at once.
    let status = child.wait().map_err(RunError::Io)?;
    Ok(Captured { status, stdout })
}

/// Kill the child's whole group and reap it (after the waiting thread, if
/// any, has seen it go).
fn kill(child: &mut std::process::Child, watch: Option<&mut ExitWatch>) {
    let pid = rustix::process::Pid::from_child(child);
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    let _ = child.kill();
    if let Some(w) = watch {
        w.join();
    }
    let _ = child.wait();
}

/// The time left until `deadline` as a `poll` timeout.
fn poll_timeout(deadline: Instant) -> rustix::event::Timespec {
    let left = deadline.saturating_duration_since(Instant::now());
    rustix::event::Timespec::try_from(left).unwrap_or(rustix::event::Timespec {
        tv_sec: i64::MAX / 2,
        tv_nsec: 0,
    })
}

/// Phase 1 of [`run_captured`]: read the child's stdout to its end (at
/// most `limit` bytes), noticing its exit on the way. The output, and
/// whether the exit was seen. On an error the pipe is dropped first (so
/// an over-long writer gets EPIPE), then the group killed.
fn read_stdout(
    child: &mut std::process::Child,
    pipe: std::process::ChildStdout,
    watch: &mut ExitWatch,
    deadline: Instant,
    limit: usize,
) -> Result<(Vec<u8>, bool), RunError> {
    let mut out = Some(pipe);
    let mut fail =
        |out: &mut Option<std::process::ChildStdout>, watch: &mut ExitWatch, e: RunError| {
            // Dropping the pipe (an escaped descendant may still hold its
            // other end) and killing the group.
            drop(out.take());
            kill(child, Some(watch));
            Err(e)
        };
    let mut exited_seen = false;
    let mut stdout = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while let Some(pipe) = out.as_mut() {
        if Instant::now() >= deadline {
            return fail(&mut out, watch, RunError::Timeout);
        }
        let ts = poll_timeout(deadline);
        let watch_exit = !exited_seen;
        let exit_fd = watch.fd();
        let mut fds = [
            PollFd::new(&*pipe, PollFlags::IN),
            if watch_exit {
                PollFd::from_borrowed_fd(exit_fd, PollFlags::IN)
            } else {
                PollFd::new(&*pipe, PollFlags::empty())
            },
        ];
        let n = if watch_exit { 2 } else { 1 };
        let polled = rustix::event::poll(&mut fds[..n], Some(&ts));
        let pipe_ready = !fds[0].revents().is_empty();
        let exit_ready = watch_exit && !fds[1].revents().is_empty();
        match polled {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return fail(&mut out, watch, RunError::Io(e.into())),
        }
        // Not reaped yet: while it is a zombie its pid cannot be reused, so
        // killing its group on a later timeout cannot hit another process.
        exited_seen |= exit_ready;
        if !pipe_ready {
            continue;
        }
        let room = (limit + 1 - stdout.len()).min(chunk.len());
        match pipe.read(&mut chunk[..room]) {
            Ok(0) => out = None,
            Ok(k) => {
                stdout.extend_from_slice(&chunk[..k]);
                if stdout.len() > limit {
                    return fail(&mut out, watch, RunError::TooLarge);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return fail(&mut out, watch, RunError::Io(e)),
        }
    }
    Ok((stdout, exited_seen))
}

/// Phase 2: stdout is closed; wait on the exit notice.
fn await_exit(
    child: &mut std::process::Child,
    watch: &mut ExitWatch,
    deadline: Instant,
) -> Result<(), RunError> {
    loop {
        if Instant::now() >= deadline {
            kill(child, Some(watch));
            return Err(RunError::Timeout);
        }
        let ts = poll_timeout(deadline);
        let mut fds = [PollFd::from_borrowed_fd(watch.fd(), PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => continue,
            Ok(_) => return Ok(()),
            Err(e) => {
                kill(child, Some(watch));
                return Err(RunError::Io(e.into()));
            }
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

/// Why [`exec`] or [`run_masked`] could not run a command: the exit code
/// to use (127 not found, 126 cannot execute, 1 when waiting for it
/// failed) and a value-free message naming the program. Nothing here
/// prints it: the CLI turns it into its `Failure`, printed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecError {
    pub code: i32,
    pub message: String,
}

impl ExecError {
    fn cannot_run(program: &OsStr, code: i32, what: impl std::fmt::Display) -> ExecError {
        ExecError {
            code,
            message: format!("cannot run {}: {what}", program.to_string_lossy()),
        }
    }
}

/// The checks before `execve`: each variable, then the whole payload.
fn check_exec(program: &OsStr, args: &[std::ffi::OsString], env: &Env) -> Result<(), ExecError> {
    check_exec_env(env)
        .and_then(|()| check_exec_total(program, args, env, exec_total_limit()))
        .map_err(|msg| ExecError::cannot_run(program, 126, msg))
}

/// Replace this process with `program args…` in exactly `env`.
/// Returns only on failure (127 not found, 126 cannot execute).
pub fn exec(
    program: &OsStr,
    args: &[std::ffi::OsString],
    env: &Env,
) -> Result<std::convert::Infallible, ExecError> {
    check_exec(program, args, env)?;
    use std::io::Write;
    let _ = io::stdout().flush();
    let mut cmd = Command::new(program);
    cmd.args(args).env_clear().envs(env);
    // PATH lookup uses the child's PATH (the assembled one), as a shell would.
    let err = cmd.exec();
    Err(match err.kind() {
        io::ErrorKind::NotFound => ExecError::cannot_run(program, 127, "command not found"),
        _ => ExecError::cannot_run(program, 126, io_kind(&err)),
    })
}

/// The exit status of a finished child: its code, or 128+N when signal N
/// ended it.
pub fn status_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// `si_code` of a signal the kernel sent itself (Linux `SI_KERNEL`): the
/// terminal's ^C, ^\ and hang-up go to the whole foreground process
/// group, the child included, so they are not sent a second time.
const SI_KERNEL: i32 = 0x80;

/// Run `program args…` in exactly `env` with stdin inherited and stdout and
/// stderr each on a pipe through `masker` into this process's own (kept
/// separate, each in order; the tail of an unfinished line is released
/// after [`crate::mask::IDLE`]). SIGINT, SIGTERM and SIGHUP sent to this
/// process are passed to the child. Returns the child's status (128+N for
/// signal N); an [`ExecError`] as [`exec`]'s when it cannot be run, or
/// with code 1 when waiting for it failed.
///
/// This thread pumps both streams ([`crate::mask::Pump`], one `poll`
/// loop) and learns of the exit from the same loop ([`ExitWatch`]: a
/// pidfd, or on the portable path a waiting thread's pipe), so the pid
/// stays the child's, unreaped, while signals may be passed on. One
/// thread writes both streams: while the reader of our stdout is slow,
/// stderr waits too (the child fills its 1 MiB pipes meanwhile). After
/// the child exits, its streams are read while a descendant that still
/// holds them keeps writing (up to [`crate::mask::DRAIN_IDLE`] idle),
/// then left.
pub fn run_masked(
    program: &OsStr,
    args: &[std::ffi::OsString],
    env: &Env,
    masker: std::sync::Arc<crate::mask::Masker>,
) -> Result<i32, ExecError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::exfiltrator::WithRawSiginfo;
    use signal_hook::iterator::SignalsInfo;
    use std::os::fd::AsFd;
    use std::sync::{Arc, Mutex};

    check_exec(program, args, env)?;
    let fail = |what: String| Err(ExecError::cannot_run(program, 126, what));
    // Installed before the child starts, so no signal is lost between.
    let mut signals = match SignalsInfo::<WithRawSiginfo>::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot handle signals: {}", io_kind(&e))),
    };
    let (out_fd, err_fd) = match (
        io::stdout().as_fd().try_clone_to_owned(),
        io::stderr().as_fd().try_clone_to_owned(),
    ) {
        (Ok(o), Ok(e)) => (std::fs::File::from(o), std::fs::File::from(e)),
        (Err(e), _) | (_, Err(e)) => return fail(io_kind(&e)),
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(env)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ExecError::cannot_run(program, 127, "command not found"));
        }
        Err(e) => return fail(io_kind(&e)),
    };
    // Before the signals are passed on: a failure here leaves no thread.
    let mut watch = match ExitWatch::new(&child, Watch::here()) {
        Ok(w) => w,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return fail(io_kind(&e));
        }
    };
    let pid = rustix::process::Pid::from_child(&child);
    let target = Arc::new(Mutex::new(Some(pid)));
    let handle = signals.handle();
    let forward = {
        let target = target.clone();
        std::thread::spawn(move || {
            for info in signals.forever() {
                if info.si_code == SI_KERNEL {
                    continue;
                }
                let Some(sig) = rustix::process::Signal::from_named_raw(info.si_signo) else {
                    continue;
                };
                // Until it is reaped (below, after clearing this) the pid
                // is the child's, even after it exits.
                if let Some(pid) = *target.lock().unwrap_or_else(|p| p.into_inner()) {
                    let _ = rustix::process::kill_process(pid, sig);
                }
            }
        })
    };
    let child_out = child.stdout.take().expect("stdout is piped");
    let child_err = child.stderr.take().expect("stderr is piped");
    // Our stdout's pipe grown too: fewer wake-ups per MiB on both hops
    // (best effort; the system's pipe-max-size may refuse).
    crate::platform::set_pipe_size(out_fd.as_fd(), crate::mask::PIPE_SIZE);
    {
        let mut pump = crate::mask::Pump::new(masker)
            .grown_source(child_out.into(), crate::mask::FdOut(out_fd))
            .grown_source(child_err.into(), crate::mask::FdOut(err_fd))
            .done_when(watch.fd());
        // A `poll` failure ends the pump early: the exit is awaited below.
        let _ = pump.until_drained();
        // The pump and its pipes dropped here: a descendant still writing
        // sees them closed.
    }
    // At once when the pump saw the exit.
    wait_unreaped(pid);
    watch.join();
    *target.lock().unwrap_or_else(|p| p.into_inner()) = None;
    handle.close();
    let _ = forward.join();
    match child.wait() {
        Ok(status) => Ok(status_code(status)),
        Err(e) => Err(ExecError {
            code: 1,
            message: format!("waiting for {}: {}", program.to_string_lossy(), io_kind(&e)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Captured {
        /// The exit code, or 128+signal for a child killed by a signal.
        fn code(&self) -> i32 {
            status_code(self.status)
        }
    }

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

    /// Both ways of awaiting the exit: pidfd, and the waiting thread.
    fn both(f: impl Fn(&dyn Fn(Command, Duration, usize) -> Result<Captured, RunError>)) {
        f(&|c, t, l| run_captured_with(c, t, l, Watch::Pidfd));
        f(&|c, t, l| run_captured_with(c, t, l, Watch::Thread));
    }

    /// `script` is stopped at a 300 ms timeout, well before it would end.
    fn times_out(script: &str) {
        both(|run| {
            let t = std::time::Instant::now();
            let r = run(sh(script), Duration::from_millis(300), 100);
            assert!(matches!(r, Err(RunError::Timeout)), "{script}");
            assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        });
    }

    #[test]
    fn captures_stdout_and_status() {
        both(|run| {
            let r = run(sh("printf hi; exit 3"), Duration::from_secs(5), 100).unwrap();
            assert_eq!(r.stdout, b"hi");
            assert_eq!(r.code(), 3);
        });
    }

    #[test]
    fn waits_for_a_descendant_holding_stdout_after_the_child_exits() {
        both(|run| {
            let r = run(
                sh("(sleep 0.2; printf late) & printf early"),
                Duration::from_secs(10),
                100,
            )
            .unwrap();
            assert_eq!(r.stdout, b"earlylate");
            assert_eq!(r.code(), 0);
        });
    }

    #[test]
    fn timeout_covers_a_child_running_on_after_closing_stdout() {
        times_out("exec >&-; printf x >&2; sleep 30");
    }

    #[test]
    fn large_output_under_the_limit_is_read_whole() {
        both(|run| {
            let r = run(sh("yes | head -c 300000"), Duration::from_secs(10), 300000).unwrap();
            assert_eq!(r.stdout.len(), 300000);
            assert_eq!(r.code(), 0);
        });
    }

    #[test]
    fn timeout_kills_the_group() {
        times_out("sleep 30 & sleep 30");
    }

    #[test]
    fn timeout_returns_while_an_escaped_descendant_holds_stdout() {
        // setsid leaves the group, so the kill misses it; the pipe stays
        // open for 20 s, yet the call returns at the timeout.
        times_out("setsid sleep 20 & echo x");
    }

    #[test]
    fn output_over_the_limit_fails() {
        both(|run| {
            let r = run(sh("yes | head -c 5000"), Duration::from_secs(5), 1000);
            assert!(matches!(r, Err(RunError::TooLarge)));
        });
    }

    #[test]
    fn signal_death_maps_to_128_plus() {
        both(|run| {
            let r = run(sh("kill -9 $$"), Duration::from_secs(5), 100).unwrap();
            assert_eq!(r.code(), 137);
        });
    }
}
