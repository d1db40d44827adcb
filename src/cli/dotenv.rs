//! `agentenv dotenv parse | check`
//!
//! - `parse FILE... [--format F]`: the variables of all files (later files
//!   win), rendered in F (default `json`) on stdout. Nothing else is
//!   printed, except that `-v` shows each file's diagnostics on stderr.
//! - `check FILE...`: one `FILE:LINE: error: …` / `FILE:LINE: warning: …`
//!   line per diagnostic on **stdout** (they are the requested output);
//!   exit 1 when any line was ignored, a quote never closed, or a
//!   multi-line value swallowed lines that look like assignments (or a
//!   file could not be read), else 0.
//!
//! An unreadable file (missing, a directory, …) is
//! `agentenv: error: cannot read FILE: <reason>` on stderr and exit 1; the
//! reason is [`crate::fsutil::io_kind`]'s. No value ever reaches stderr.

use super::{Exit, Failure};
use crate::dotenv::{parse_bytes, Parsed};
use crate::render::{parse_format, View};
use indexmap::IndexMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub enum DotenvCommand {
    /// Print the parsed variables (later files win).
    #[command(after_help = super::examples::DOTENV_PARSE)]
    Parse {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format (default json).
        #[arg(long = "format", value_name = "F", default_value = "json")]
        format: String,
    },
    /// Report ignored lines, unterminated quotes, trailing text, duplicates.
    #[command(after_help = super::examples::DOTENV_CHECK)]
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

pub fn run(c: DotenvCommand) -> super::Exit {
    match c {
        DotenvCommand::Parse { files, format } => run_parse(&files, &format),
        DotenvCommand::Check { files } => run_check(&files),
    }
}

/// Largest file `dotenv parse`/`check` reads.
pub const MAX_DOTENV_FILE: u64 = 64 << 20;

/// The pipe deadline one command's inputs share: three FIFOs nobody
/// writes cost one [`crate::fsutil::PIPE_TIMEOUT`], not three.
fn pipe_deadline() -> std::time::Instant {
    std::time::Instant::now() + crate::fsutil::PIPE_TIMEOUT
}

fn read_parse(path: &Path, deadline: std::time::Instant) -> Result<Parsed, Failure> {
    match crate::fsutil::read_input_until(path, MAX_DOTENV_FILE, deadline) {
        Ok(bytes) => Ok(parse_bytes(&bytes)),
        Err(e) => Err(Failure::runtime(format!(
            "cannot read {}: {}",
            path.display(),
            crate::fsutil::io_kind(&e)
        ))),
    }
}

fn run_parse(files: &[PathBuf], format: &str) -> Exit {
    let format = parse_format(format)?.resolve();
    let mut vars: IndexMap<String, String> = IndexMap::new();
    let deadline = pipe_deadline();
    for path in files {
        let parsed = read_parse(path, deadline)?;
        for d in &parsed.diagnostics {
            crate::info!("{}:{}: {}", path.display(), d.line, d.message);
        }
        for e in parsed.entries {
            vars.insert(e.key, e.value);
        }
    }
    let view = View::of(
        vars.into_iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v))),
    );
    let text = super::render_shown(format, &view);
    super::write_stdout(text.as_bytes())?;
    Ok(0)
}

fn run_check(files: &[PathBuf]) -> Exit {
    let mut failed = false;
    let mut report = String::new();
    let deadline = pipe_deadline();
    for path in files {
        // An unreadable file is reported and the others still checked.
        let parsed = match read_parse(path, deadline) {
            Ok(p) => p,
            Err(f) => {
                crate::error!("{}", f.message);
                failed = true;
                continue;
            }
        };
        for d in &parsed.diagnostics {
            failed |= d.is_error;
            let sev = if d.is_error { "error" } else { "warning" };
            report.push_str(&format!(
                "{}:{}: {sev}: {}\n",
                path.display(),
                d.line,
                d.message
            ));
        }
    }
    super::write_stdout(report.as_bytes())?;
    Ok(i32::from(failed))
}
