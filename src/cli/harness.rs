//! `agentenv harness resolve | lint | run | sandbox-env`

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
    Resolve(HarnessOpts),
    /// Print diagnostics; exit 1 only on errors.
    Lint(HarnessOpts),
    /// Run a command with the effective runner environment.
    Run {
        #[command(flatten)]
        opts: HarnessOpts,
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "CMD"
        )]
        command: Vec<OsString>,
    },
    /// Write the sandbox environment file.
    SandboxEnv {
        #[command(flatten)]
        opts: HarnessOpts,
        /// Output file (default: stdout).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// export or dotenv.
        #[arg(long = "format", value_name = "F", default_value = "export")]
        format: String,
    },
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
        }
    }
}

fn host_env() -> crate::core::Env {
    std::env::vars_os().collect()
}

/// Resolve, printing the error (value-free) on failure.
fn resolve(opts: &HarnessOpts) -> Result<crate::harness::Resolved, i32> {
    match crate::harness::resolve(&opts.to_options(), &host_env()) {
        Ok(r) => Ok(r),
        Err(e) => {
            crate::error!("{e}");
            Err(1)
        }
    }
}

fn print_warnings(r: &crate::harness::Resolved) {
    for w in r.notes.iter().chain(&r.warnings) {
        crate::warn!("{w}");
    }
}

fn write_stdout(bytes: &[u8]) -> i32 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            crate::error!("writing output: {}", crate::process::io_kind(&e));
            1
        }
    }
}

pub fn run(c: HarnessCommand) -> i32 {
    match c {
        HarnessCommand::Resolve(opts) => {
            let r = match resolve(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            print_warnings(&r);
            let mut s = serde_json::to_string_pretty(&r.to_json()).unwrap_or_default();
            s.push('\n');
            write_stdout(s.as_bytes())
        }
        HarnessCommand::Lint(opts) => {
            let r = match resolve(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            print_warnings(&r);
            let mut s = String::new();
            for d in &r.diagnostics {
                s.push_str(&d.to_string());
                s.push('\n');
            }
            let code = write_stdout(s.as_bytes());
            if r.diagnostics.iter().any(|d| d.error) {
                1
            } else {
                code
            }
        }
        HarnessCommand::Run { opts, command } => {
            let r = match resolve(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            print_warnings(&r);
            for d in &r.diagnostics {
                crate::warn!("{}: {}", d.field, d.message);
            }
            let env = r.child_env();
            let (program, args) = command.split_first().expect("clap requires CMD");
            crate::process::exec(program, args, &env)
        }
        HarnessCommand::SandboxEnv {
            opts,
            output,
            format,
        } => {
            if format != "export" && format != "dotenv" {
                crate::error!("--format: unknown value {format:?} (accepted: export, dotenv)");
                return 1;
            }
            let r = match resolve(&opts) {
                Ok(r) => r,
                Err(code) => return code,
            };
            print_warnings(&r);
            let body = if format == "dotenv" {
                match r.sandbox_dotenv() {
                    Ok(b) => b,
                    Err(key) => {
                        crate::error!(
                            "env.sandbox[{key}]: the value cannot be written in the dotenv format exactly (use --format export)"
                        );
                        return 1;
                    }
                }
            } else {
                r.sandbox_export()
            };
            match output {
                None => write_stdout(body.as_bytes()),
                Some(path) => match crate::fsutil::write_atomic(
                    &path,
                    body.as_bytes(),
                    crate::fsutil::Mode::Exactly(0o600),
                    false,
                ) {
                    Ok(()) => 0,
                    Err(e) => {
                        crate::error!(
                            "cannot write {}: {}",
                            path.display(),
                            crate::process::io_kind(&e)
                        );
                        1
                    }
                },
            }
        }
    }
}
