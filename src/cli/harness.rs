//! `agentenv harness resolve | lint | run | sandbox-env | explain`

use super::session::TextOrJson;
use super::{Exit, Failure};
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, Clone, clap::Args)]
pub struct HarnessOpts {
    /// The harness YAML file.
    pub file: PathBuf,
    /// Forge platform (github, gitlab, jira).
    #[arg(long = "forge", value_name = "P")]
    pub forge: Option<String>,
    /// FULLSEND_DIR for expansion.
    #[arg(long = "fullsend-dir", value_name = "D")]
    pub fullsend_dir: Option<PathBuf>,
    /// Dotenv file loaded first (repeatable).
    #[arg(long = "env-file", value_name = "F")]
    pub env_file: Vec<PathBuf>,
    /// Event JSON for CEL guards.
    #[arg(long = "event", visible_alias = "event-file", value_name = "FILE")]
    pub event: Option<PathBuf>,
    /// Config JSON or YAML for CEL guards.
    #[arg(long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory of content-addressed bases for https:// base URLs.
    #[arg(long = "base-cache", value_name = "DIR")]
    pub base_cache: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
pub enum HarnessCommand {
    /// Print the resolved environment as JSON.
    #[command(after_help = super::examples::HARNESS_RESOLVE)]
    Resolve(HarnessOpts),
    /// Print diagnostics; exit 1 only on errors.
    #[command(after_help = super::examples::HARNESS_LINT)]
    Lint(HarnessOpts),
    /// Run a command with the effective runner environment.
    #[command(after_help = super::examples::HARNESS_RUN)]
    Run {
        #[command(flatten)]
        opts: HarnessOpts,
        #[command(flatten)]
        redact: super::session::RedactFlag,
        #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
        command: Vec<OsString>,
    },
    /// Show where each variable was set: file, block, YAML line, and the
    /// host variables its references read (values only with --show-values).
    #[command(after_help = super::examples::HARNESS_EXPLAIN)]
    Explain {
        #[command(flatten)]
        opts: HarnessOpts,
        /// Output format.
        #[arg(long = "format", value_name = "F", value_enum, default_value_t = super::session::TextOrJson::Text)]
        format: super::session::TextOrJson,
        /// Print values too.
        #[arg(long = "show-values")]
        show_values: bool,
        /// Only these variables.
        #[arg(value_name = "VAR", last = false)]
        vars: Vec<String>,
    },
    /// Write the sandbox environment file.
    #[command(after_help = super::examples::HARNESS_SANDBOX_ENV)]
    SandboxEnv {
        #[command(flatten)]
        opts: HarnessOpts,
        /// Output file (default: stdout): a regular file, created 0600 or
        /// replaced atomically; a FIFO, device or socket is refused.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Output format.
        #[arg(long = "format", value_name = "F", value_enum, default_value_t = SandboxFormat::Export)]
        format: SandboxFormat,
    },
}

/// `sandbox-env --format`: a clap `ValueEnum` (an unknown value lists the
/// accepted ones, exit 1 as every bad `--format`; see `cli::main`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SandboxFormat {
    Export,
    Dotenv,
    Github,
    Docker,
}

impl HarnessOpts {
    fn to_options(&self) -> crate::harness::Options {
        crate::harness::Options {
            file: self.file.clone(),
            forge: self.forge.clone(),
            fullsend_dir: self.fullsend_dir.clone(),
            env_files: self.env_file.clone(),
            event: self.event.clone(),
            config: self.config.clone(),
            base_cache: self.base_cache.clone(),
            files_as_findings: false,
        }
    }
}

fn host_env() -> crate::core::Env {
    std::env::vars_os().collect()
}

/// Resolve; a failure carries the (value-free) error.
fn resolve(opts: &HarnessOpts) -> Result<crate::harness::Resolved, Failure> {
    resolve_with(opts.to_options())
}

fn resolve_with(o: crate::harness::Options) -> Result<crate::harness::Resolved, Failure> {
    let r =
        crate::harness::resolve(&o, &host_env()).map_err(|e| Failure::runtime(e.to_string()))?;
    crate::log::notes(r.assembly.notes());
    Ok(r)
}

pub fn run(c: HarnessCommand) -> Exit {
    match c {
        HarnessCommand::Resolve(opts) => super::print(resolve(&opts)?.to_json_string().as_bytes()),
        HarnessCommand::Explain {
            opts,
            format,
            show_values,
            vars,
        } => {
            let r = resolve(&opts)?;
            let body = match format {
                TextOrJson::Json => r.explain_json(&vars, show_values),
                TextOrJson::Text => r.explain_text(&vars, show_values),
            };
            super::print(body.as_bytes())
        }
        HarnessCommand::Lint(opts) => {
            let mut o = opts.to_options();
            o.files_as_findings = true;
            let r = resolve_with(o)?;
            let mut s = String::new();
            for d in &r.diagnostics {
                s.push_str(&d.to_string());
                s.push('\n');
            }
            let code = super::print(s.as_bytes())?;
            Ok(if r.diagnostics.iter().any(|d| d.error) {
                1
            } else {
                code
            })
        }
        HarnessCommand::Run {
            opts,
            redact,
            command,
        } => run_command(&opts, redact.redact, &command),
        HarnessCommand::SandboxEnv {
            opts,
            output,
            format,
        } => sandbox_env(&opts, output, format),
    }
}

/// `harness run`: the resolved runner env, then exec (or the masked run).
fn run_command(opts: &HarnessOpts, redact: bool, command: &[OsString]) -> Exit {
    let r = resolve(opts)?;
    for d in &r.diagnostics {
        crate::warn!("{}: {}", d.field, d.message);
    }
    if let Some(name) = r.unpassable_name() {
        return Err(Failure {
            code: 126,
            message: format!(
                "runner env key {name:?} cannot be passed in an environment (empty, or containing '=' or NUL)"
            ),
        });
    }
    let env = r.child_env();
    let (program, args) = command.split_first().expect("clap requires CMD");
    if redact {
        let masker = super::session::masker_of(crate::harness::redact::sensitive_pairs(&r));
        return Ok(crate::process::run_masked(program, args, env, masker)?);
    }
    let Err(e) = crate::process::exec(program, args, env);
    Err(e.into())
}

/// `harness sandbox-env`: the sandbox entries in a format, to stdout or a
/// private file.
fn sandbox_env(opts: &HarnessOpts, output: Option<PathBuf>, format: SandboxFormat) -> Exit {
    let r = resolve(opts)?;
    let body = match format {
        SandboxFormat::Dotenv => r
            .sandbox_dotenv()
            .map_err(|key| {
                Failure::runtime(format!(
                    "env.sandbox[{}]: the value cannot be written in the dotenv format exactly (use --format export)",
                    crate::harness::shown_key(&key)
                ))
            })?
            .into_bytes(),
        // agentenv's own formats: the shared renderer (omissions
        // and what the format cannot carry warned by name).
        SandboxFormat::Github | SandboxFormat::Docker => {
            let f = if format == SandboxFormat::Github {
                crate::render::Format::Github
            } else {
                crate::render::Format::Docker
            };
            let pairs = r
                .sandbox_entries
                .iter()
                .map(|(k, v)| (OsString::from(k), v.clone()));
            super::render_shown(f, &crate::render::View::of(pairs)).into_bytes()
        }
        SandboxFormat::Export => r.sandbox_export(),
    };
    match output {
        None => super::print(&body),
        Some(path) => {
            super::write_file(
                &path,
                &body,
                crate::fsutil::Mode::Private,
                false,
                |path, kind| format!("cannot write {path}: {kind}"),
            )?;
            Ok(0)
        }
    }
}
