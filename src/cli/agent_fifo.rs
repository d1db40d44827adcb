//! The masking side of a rewritten agent command (`hook CLIENT run`,
//! see `agent_hook`): three FIFOs in a fresh owner-only directory —
//! `out` and `err` carry the command's stdout and stderr, `ctl` the
//! shell's "the command is over" byte — and the loop that masks `out` onto
//! fd 1 and `err` onto fd 2.
//!
//! The handshake with the shell:
//! 1. the directory goes to the sync pipe (fd 0), a line;
//! 2. the shell opens `c` (ctl), `o` (out), `e` (err) for writing in that order; this
//!    side opens them for reading in the same order (each open waits for
//!    its writer), then removes the FIFOs and their directory, so nothing
//!    else can open them; then the exports go to the sync pipe, ended by
//!    NUL, and the shell `eval`s them;
//! 3. when the command is over the shell writes a byte to `ctl` and closes
//!    its ends. Each stream is read until its end, or — when a background
//!    job the command started still holds it — until it has been idle for
//!    a moment (`mask::stream::pump`); then a line goes to the sync pipe, which
//!    the shell waits for, so every byte the command wrote is out before
//!    the client reads the result;
//! 4. a stream a background job holds goes on being masked until it ends.
//!
//! If the shell never opens the FIFOs (it died), the process gives up
//! after [`OPEN_WAIT`] and removes them.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::Arc;

/// How long the shell may take to open the FIFOs.
const OPEN_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// The three FIFOs and their directory (removed on drop).
pub struct Fifos {
    dir: tempfile::TempDir,
    pub ctl: PathBuf,
    pub out: PathBuf,
    pub err: PathBuf,
}

/// Where the directory goes: `$XDG_RUNTIME_DIR` when it is an owner-only
/// directory of ours, else the temp dir.
fn base_dir() -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        let d = PathBuf::from(d);
        if let Ok(md) = std::fs::symlink_metadata(&d) {
            if md.is_dir()
                && md.uid() == rustix::process::geteuid().as_raw()
                && md.mode() & 0o077 == 0
            {
                return d;
            }
        }
    }
    std::env::temp_dir()
}

impl Fifos {
    pub fn create() -> io::Result<Fifos> {
        // tempfile makes the directory 0700 with an unpredictable name.
        let dir = tempfile::Builder::new()
            .prefix("agentenv-cmd-")
            .tempdir_in(base_dir())?;
        if dir.path().as_os_str().as_encoded_bytes().contains(&b'\n') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the temp directory's path holds a newline",
            ));
        }
        let mk = |name: &str| -> io::Result<PathBuf> {
            let p = dir.path().join(name);
            rustix::fs::mknodat(
                rustix::fs::CWD,
                &p,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )?;
            Ok(p)
        };
        Ok(Fifos {
            ctl: mk("c")?,
            out: mk("o")?,
            err: mk("e")?,
            dir,
        })
    }
}

fn dup_std(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<File> {
    Ok(File::from(rustix::io::dup(fd)?))
}

/// Run the handshake and the masking (module doc). `sync` is the pipe
/// the shell reads `prologue` and then the go-on line from.
pub fn serve(
    fifos: Fifos,
    mut sync: File,
    prologue: &[u8],
    masker: Arc<crate::mask::Masker>,
) -> io::Result<()> {
    use crate::mask::{pump, MaskWriter};
    use std::io::Write;
    let stdout = dup_std(std::io::stdout().as_fd())?;
    let stderr = dup_std(std::io::stderr().as_fd())?;
    // The directory (a line; the shell opens `c`, `o`, `e` in it), then —
    // once the shell's output goes into the FIFOs — the exports.
    let mut line = fifos.dir.path().as_os_str().as_encoded_bytes().to_vec();
    line.push(b'\n');
    sync.write_all(&line)?;
    // The opens wait for the shell; a watchdog ends the wait.
    let opened = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let opened = opened.clone();
        let dir = fifos.dir.path().to_path_buf();
        std::thread::spawn(move || {
            std::thread::sleep(OPEN_WAIT);
            if !opened.load(std::sync::atomic::Ordering::SeqCst) {
                let _ = std::fs::remove_dir_all(&dir);
                std::process::exit(1);
            }
        });
    }
    let ctl = File::open(&fifos.ctl)?;
    let out = File::open(&fifos.out)?;
    let err = File::open(&fifos.err)?;
    opened.store(true, std::sync::atomic::Ordering::SeqCst);
    drop(fifos);
    sync.write_all(prologue)?;
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let streams = [(out, stdout), (err, stderr)];
        for (src, dst) in streams {
            let tx = tx.clone();
            let ctl = &ctl;
            let masker = masker.clone();
            s.spawn(move || {
                let mut w = MaskWriter::new(masker, dst);
                // Up to the shell's byte (and the stream's end or idle).
                let first = pump(&src, &mut w, Some(ctl.as_fd()));
                let _ = tx.send(());
                if first.is_ok() {
                    // What a background job writes later.
                    let _ = pump(&src, &mut w, None);
                }
            });
        }
        drop(tx);
        // Both streams caught up: let the shell go on (a line, or the
        // pipe's end if this process ends first).
        let _ = rx.recv();
        let _ = rx.recv();
        let _ = sync.write_all(b"\n");
    });
    Ok(())
}
