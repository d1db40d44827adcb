//! `agentenv launch`: apply the operator layer to this process's
//! environment, then replace the process with CMD.
//!
//! Nothing is ever written to stdout (for MCP stdio servers it is the
//! protocol wire); the report goes to `--report FILE` and, at `-v`, a
//! summary of names and counts goes to stderr.

use crate::core::Assembly;
use crate::operator::{self, FileState, Options, Platform, Report, RootSource};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PlatformArg {
    Linux,
    Darwin,
    Win32,
}

impl From<PlatformArg> for Platform {
    fn from(p: PlatformArg) -> Platform {
        match p {
            PlatformArg::Linux => Platform::Linux,
            PlatformArg::Darwin => Platform::Darwin,
            PlatformArg::Win32 => Platform::Win32,
        }
    }
}

const AFTER_HELP: &str = "\
Files: $AGENT_BUNDLE_ENV_FILE (a ':' list; 'none' disables), else
<root>/.env then <root>/.env.local. They fill only what the environment does
not already set (a variable still equal to its --manifest-env default may be
overridden); later files win. Then CMD replaces this process: its stdin and
stdout are the host's pipes, and agentenv prints nothing on stdout. With
--redact agentenv stays, as CMD's parent: CMD keeps stdin, its stdout and
stderr pass through agentenv, masked, and the exit status is CMD's.

Report (--report FILE): {\"applied\": [names], \"files\": [{\"applied\"?, \"path\", \"state\"}]}
with state absent | unreadable | loaded. Exit: the child's status; 127 CMD
not found, 126 not executable; 1 bad --manifest-env or unwritable --report.";

#[derive(Debug, clap::Args)]
#[command(after_help = super::examples::after(AFTER_HELP, super::examples::LAUNCH))]
pub struct LaunchArgs {
    /// Fallback plugin root (default: the current directory); a non-blank
    /// AGENT_BUNDLE_PLUGIN_ROOT without a ${…} token overrides it.
    #[arg(long = "plugin-root", value_name = "DIR")]
    pub plugin_root: Option<PathBuf>,
    /// JSON object of manifest defaults (name → string).
    #[arg(long = "manifest-env", value_name = "FILE")]
    pub manifest_env: Option<PathBuf>,
    /// Platform whose name comparison to use (default: the host).
    #[arg(long = "platform", value_name = "PLATFORM", value_enum)]
    pub platform: Option<PlatformArg>,
    /// Do not read any .env file; tell the child so.
    #[arg(long = "no-env")]
    pub no_env: bool,
    /// Write the report (names only) to FILE (a regular file; a FIFO,
    /// device or socket is refused).
    #[arg(long = "report", value_name = "FILE")]
    pub report: Option<PathBuf>,
    #[command(flatten)]
    pub redact: super::session::RedactFlag,
    #[command(flatten)]
    pub only: super::session::OnlyFlag,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// Read and check `--manifest-env FILE`; the message names the file and,
/// for a wrong type, the key — never a value.
fn load_manifest(
    p: &Path,
    deadline: std::time::Instant,
) -> Result<indexmap::IndexMap<String, String>, String> {
    let bytes =
        crate::fsutil::read_input_until(p, operator::MAX_FILE_BYTES, deadline).map_err(|e| {
            format!(
                "cannot read manifest env file {}: {}",
                p.display(),
                crate::fsutil::io_kind(&e)
            )
        })?;
    operator::parse_manifest_env(&bytes)
        .map_err(|e| format!("manifest env file {}: {e}", p.display()))
}

fn summarise(report: &Report) {
    if report.disabled {
        crate::info!("launch: operator env layer disabled (--no-env)");
        return;
    }
    let why = match report.root_source {
        RootSource::Env => "from AGENT_BUNDLE_PLUGIN_ROOT",
        RootSource::Fallback => "the fallback",
        RootSource::FallbackToken => {
            "the fallback: AGENT_BUNDLE_PLUGIN_ROOT holds an unexpanded ${…} token"
        }
    };
    crate::info!(
        "launch: plugin root {} ({why})",
        report.plugin_root.display()
    );
    crate::debug!(
        "launch: {} variable{} reserved by the host environment",
        report.reserved,
        if report.reserved == 1 { "" } else { "s" }
    );
    if report.files.is_empty() {
        crate::info!(
            "launch: no env files ({}=none)",
            operator::ENV_FILE_VARIABLE
        );
    }
    for f in &report.files {
        match f.state {
            FileState::Loaded => crate::info!(
                "launch: {}: loaded, {} applied",
                f.path.display(),
                f.applied.unwrap_or(0)
            ),
            s => crate::info!("launch: {}: {}", f.path.display(), s.as_str()),
        }
    }
    crate::info!(
        "launch: applied {} variable{}{}{}",
        report.applied.len(),
        if report.applied.len() == 1 { "" } else { "s" },
        if report.applied.is_empty() { "" } else { ": " },
        report.applied.join(", ")
    );
}

/// At -vv: every touch of every key, with file and line (names only).
fn trace(asm: &Assembly) {
    if crate::log::level() < 2 {
        return;
    }
    for k in asm.touched_keys() {
        for t in asm.touches(k) {
            let info = &asm.layers()[t.layer].info;
            let src = match &info.path {
                Some(p) => p.display().to_string(),
                None => info.level.clone().unwrap_or_else(|| info.kind.to_string()),
            };
            let line = t.line.map(|l| format!(" line {l}")).unwrap_or_default();
            let what = match &t.action {
                crate::core::Action::Skipped(why) => format!("skipped ({why})"),
                a => a.as_str().to_string(),
            };
            crate::debug!("launch: {}: {src}{line}: {what}", k.to_string_lossy());
        }
    }
}

pub fn run(a: LaunchArgs) -> super::Exit {
    use super::Failure;
    let cwd =
        crate::fsutil::current_dir().map_err(|msg| Failure::runtime(format!("launch: {msg}")))?;
    // One pipe deadline for every input of the command (--manifest-env and
    // each AGENT_BUNDLE_ENV_FILE entry).
    let pipe_deadline = std::time::Instant::now() + crate::fsutil::PIPE_TIMEOUT;
    let manifest_env = match &a.manifest_env {
        Some(p) => match load_manifest(p, pipe_deadline) {
            Ok(m) => Some(m),
            Err(msg) => return Err(Failure::runtime(format!("launch: {msg}"))),
        },
        None => None,
    };
    let opts = Options {
        plugin_root_fallback: a.plugin_root.clone().unwrap_or_default(),
        manifest_env,
        platform: a
            .platform
            .map(Platform::from)
            .unwrap_or_else(Platform::host),
        no_env: a.no_env,
        cwd,
        pipe_deadline: Some(pipe_deadline),
    };
    let mut asm = Assembly::new(crate::core::process_env());
    let report = operator::apply_to_assembly(&mut asm, &opts);
    crate::log::notes(asm.notes());
    if let Some(p) = &a.report {
        let json = report.to_json_string();
        super::write_file(
            p,
            json.as_bytes(),
            crate::fsutil::Mode::Private,
            false,
            |p, kind| format!("launch: cannot write report {p}: {kind}"),
        )?;
    }
    summarise(&report);
    trace(&asm);
    let (cmd, args) = a.command.split_first().expect("clap requires CMD");
    let mut env = asm.current().clone();
    if a.only.given() || a.redact.redact {
        // Every value the operator layer filled is sensitive; masked or
        // not as docs/masking.md#masked-or-not says (the agentenv.toml beside the .env).
        let mut notes = Vec::new();
        let (masked, not) = super::masked::operator_sensitive(&asm, &opts.cwd, &mut notes);
        crate::log::notes(&notes);
        if a.only.given() {
            // --only keeps out every other sensitive value, masked or not
            // (a value declared public is not sensitive).
            let mut sensitive = masked.clone();
            for (name, why) in &not {
                if *why != "declared public" {
                    if let Some(v) = env.get(std::ffi::OsStr::new(name)) {
                        sensitive.push((name.clone(), v.as_encoded_bytes().to_vec()));
                    }
                }
            }
            a.only.restrict("launch", &mut env, &sensitive);
        }
        if a.redact.redact {
            for (name, why) in &not {
                crate::info!("launch: {name}: {why}");
            }
            let masker = super::session::masker_of(masked);
            return Ok(crate::process::run_masked(cmd, args, &env, masker)?);
        }
    }
    let Err(e) = crate::process::exec(cmd, args, &env);
    Err(e.into())
}
