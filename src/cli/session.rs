//! `agentenv env`, `exec`, `explain`.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::path::PathBuf;

use super::{Exit, Failure};

/// `--format text|json` of agentenv's own commands (`explain`, `status`): a clap
/// `ValueEnum`, so an unknown value lists the accepted ones and the
/// completion scripts offer them. (`env --format` stays a string parsed by
/// `render::parse_format`: its values, aliases, case-sensitivity and error
/// text are the reference's, and the cache key needs the spelling given.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    Text,
    Json,
}

/// Which stores to walk.
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Walk no project: the user (and system) store only.
    #[arg(short = 'g', long = "global")]
    pub global: bool,
    /// The user store (default: $AGENTS_HOME, else ~/.agents).
    #[arg(long = "agents-dir", value_name = "DIR")]
    pub agents_dir: Option<PathBuf>,
    /// Seconds each env.py or plain file may run (default: $AGENTS_ENV_TIMEOUT, else 30).
    #[arg(long = "timeout", value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Load the project store only if `agentenv allow` recorded it unchanged
    /// (also: AGENTENV_REQUIRE_TRUST=1); otherwise walk the other stores.
    #[arg(long = "require-trust")]
    pub require_trust: bool,
}

/// As the reference's argparse: a repeated option takes its last value and
/// an unambiguous prefix of a long option is accepted (`--form json`).
#[derive(Debug, clap::Args)]
#[command(args_override_self = true, infer_long_args = true)]
pub struct EnvArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Output format: auto (the parent shell's), export (also posix, sh,
    /// bash), dotenv (env), fish, powershell (pwsh, ps), cmd (bat, batch),
    /// json, ini, yaml; and agentenv's own github (a $GITHUB_ENV file) and
    /// docker (docker run --env-file).
    #[arg(long = "format", value_name = "F", default_value = "auto")]
    pub format: String,
    /// Print only what differs from the current environment.
    #[arg(long = "diff")]
    pub diff: bool,
    /// Replay an identical run of the last 300 s from the owner-only cache
    /// in <user store>/.cache/env.
    #[arg(long = "cache")]
    pub cache: bool,
    /// Write the rendering into FILE as its one owned block (export format;
    /// `auto` means export); nothing on stdout, also on a cache hit. A new
    /// FILE is created 0600; a FIFO, device or socket is refused.
    #[arg(long = "into", value_name = "FILE")]
    pub into: Option<PathBuf>,
    /// Append the rendering to FILE instead of printing it (a new FILE is
    /// created 0600; a FIFO, device or socket is refused). With
    /// `--format github` (`--append "$GITHUB_ENV"`), first print on stdout
    /// `::add-mask::` for every masked value rendered (each line of a
    /// multi-line one), which the Actions runner reads to hide them.
    #[arg(long = "append", value_name = "FILE", conflicts_with_all = ["into", "cache"])]
    pub append: Option<PathBuf>,
    /// Render only public variables: the ones agentenv computes and the
    /// ones a store's agentenv.toml declares public. Sensitive ones are
    /// left out silently (-v names them); removals are kept.
    #[arg(long = "public-only")]
    pub public_only: bool,
    /// Exit 1, printing nothing, when a secret reference of a store's
    /// agentenv.toml could not be resolved (each is a warning either way).
    #[arg(long = "strict")]
    pub strict: bool,
}

#[derive(Debug, clap::Args)]
#[command(args_override_self = true, infer_long_args = true)]
pub struct ExecArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Stamp this agent's identity unconditionally.
    #[arg(long = "agent", value_name = "NAME")]
    pub agent: Option<String>,
    #[command(flatten)]
    pub redact: RedactFlag,
    #[command(flatten)]
    pub only: OnlyFlag,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// `--only NAME,…` of `exec` and `launch`: least privilege per command
/// (an MCP server gets its own credential and no other).
#[derive(Debug, Clone, clap::Args)]
pub struct OnlyFlag {
    /// Give CMD only these sensitive variables (a comma list, or the flag
    /// repeated) and every public one: any other sensitive variable the
    /// layers set is removed from CMD's environment. The caller's own
    /// variables pass as without --only.
    #[arg(
        long = "only",
        value_name = "NAME",
        value_delimiter = ',',
        action = clap::ArgAction::Append
    )]
    pub only: Vec<String>,
}

impl OnlyFlag {
    /// Whether `--only` was given.
    pub fn given(&self) -> bool {
        !self.only.is_empty()
    }

    /// Remove from `env` every name of `sensitive` that `--only` does not
    /// list; warn (names only) about a listed name no layer set, so a
    /// server started without its credential says why.
    pub(crate) fn restrict(
        &self,
        command: &str,
        env: &mut crate::core::Env,
        sensitive: &[(String, Vec<u8>)],
    ) {
        if self.given() {
            crate::session::only::keep_only(&self.only, command, env, sensitive);
        }
    }
}

/// `--redact` of `exec`, `launch` and `harness run` (also
/// `AGENTENV_REDACT=1`).
#[derive(Debug, Clone, clap::Args)]
pub struct RedactFlag {
    /// Mask every form of each sensitive value in CMD's stdout and stderr
    /// as [REDACTED:NAME] (also: AGENTENV_REDACT=1). CMD keeps stdin; the
    /// exit status is CMD's; SIGINT, SIGTERM and SIGHUP are passed on.
    #[arg(
        long = "redact",
        env = "AGENTENV_REDACT",
        hide_env_values = true,
        value_parser = clap::builder::BoolishValueParser::new(),
        action = clap::ArgAction::SetTrue
    )]
    pub redact: bool,
}

/// `agentenv redact`: the masks of the session assembly, stdin to stdout.
#[derive(Debug, clap::Args)]
#[command(args_override_self = true, infer_long_args = true)]
pub struct RedactArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
}

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Output format.
    #[arg(long = "format", value_name = "F", value_enum, default_value_t = TextOrJson::Text)]
    pub format: TextOrJson,
    /// Show values (hidden by default).
    #[arg(long = "show-values")]
    pub show_values: bool,
    /// Variables to explain (default: every changed one).
    pub vars: Vec<String>,
}

/// Session options from the scope flags, before the trust gate; a bad
/// `--timeout` is a usage error.
fn scope_options(scope: &ScopeArgs) -> Result<crate::session::Options, Failure> {
    let timeout = match scope.timeout {
        None => None,
        Some(t) if t.is_finite() && t > 0.0 && t < 1e9 => {
            Some(std::time::Duration::from_secs_f64(t))
        }
        Some(_) => {
            return Err(Failure::usage(
                "--timeout must be a positive number of seconds",
            ))
        }
    };
    Ok(crate::session::Options {
        global: scope.global,
        agents_dir: scope.agents_dir.clone(),
        timeout,
        agent: None,
        ..Default::default()
    })
}

impl From<crate::session::Error> for Failure {
    fn from(e: crate::session::Error) -> Failure {
        Failure::runtime(e.to_string())
    }
}

/// The session's request for the scope flags (the reference's root rule,
/// the trust gate as `--require-trust` says, `-v`'s lines at `-v`).
pub(crate) fn request(
    scope: &ScopeArgs,
    cache: crate::session::CacheMode,
) -> Result<crate::session::Request, Failure> {
    Ok(crate::session::Request {
        require_trust: scope.require_trust,
        cache,
        trace: crate::log::level() >= 1,
        ..crate::session::Request::new(scope_options(scope)?)
    })
}

/// Plan `req` over the process environment and print what deciding had
/// to say (the gate's refusal, the scope's warnings, `-v`'s lines, the
/// cache's hit or miss).
pub(crate) fn planned(req: &crate::session::Request) -> Result<crate::session::Plan, Failure> {
    let mut plan = crate::session::plan(req, &crate::core::process_env())?;
    crate::log::notes(&plan.take_notes());
    Ok(plan)
}

pub fn run_env(a: EnvArgs) -> Exit {
    // The format is validated before anything runs (exit 1).
    let choice = crate::render::parse_format(&a.format)?;
    // --into writes the export format (`auto` means export); an explicit
    // other format is refused before any layer runs (the reference checks
    // after rendering and storing the cache entry, which a later hit then
    // printed on stdout).
    let format = choice
        .resolve_for(a.into.is_some())
        .map_err(Failure::runtime)?;
    // --cache: the probe runs before any layer (fast path); the key has
    // the format as given.
    let cache = if a.cache {
        crate::session::CacheMode::Replay {
            format: choice.given_name(format).to_string(),
            diff: a.diff,
            public_only: a.public_only,
        }
    } else {
        crate::session::CacheMode::Off
    };
    let plan = planned(&request(&a.scope, cache)?)?;
    if let Some(bytes) = plan.cached() {
        return match &a.into {
            // With --into the replayed bytes go into the file, never to
            // stdout (an entry is UTF-8: lookup checks it).
            Some(path) => write_into(path, &String::from_utf8_lossy(bytes)),
            None => super::print(bytes),
        };
    }
    let session = assemble_shown(&plan);
    if a.strict {
        if let Some(m) = crate::session::report::unresolved(&session) {
            return Err(Failure::runtime(m));
        }
    }
    let mut view = session.view(a.diff);
    if a.public_only {
        let left_out = session.keep_public(&mut view);
        if !left_out.is_empty() {
            crate::info!(
                "--public-only left out {} variable(s) that are not public: {}",
                left_out.len(),
                left_out.join(", ")
            );
        }
    }
    let text = super::render_shown(format, &view);
    plan.store(text.as_bytes());
    if let Some(path) = &a.into {
        return write_into(path, &text);
    }
    if let Some(path) = &a.append {
        if format == crate::render::Format::Github {
            // Registered with the runner before the values reach it.
            super::print(crate::session::report::add_masks(&session, &view).as_bytes())?;
        }
        return match crate::fsutil::append_private(path, text.as_bytes()) {
            Ok(()) => Ok(0),
            Err(e) => Err(Failure::runtime(format!(
                "--append {}: cannot write it ({})",
                path.display(),
                crate::fsutil::io_kind(&e)
            ))),
        };
    }
    if format == crate::render::Format::Github && std::env::var_os("GITHUB_ACTIONS").is_some() {
        crate::warn!(
            "--format github on stdout registers no value with the runner's masker; use --append \"$GITHUB_ENV\" (it prints ::add-mask:: for each)"
        );
    }
    super::print(text.as_bytes())
}

/// Run the layers, then print what they had to say (warnings; `-v` a line
/// per env file; `-vv` how each plain file was evaluated), in order.
pub(crate) fn assemble_shown(plan: &crate::session::Plan) -> crate::session::Session {
    let session = plan.assemble();
    crate::log::notes(session.assembly.notes());
    for w in crate::session::report::readable_store_files(&session) {
        crate::warn!("{w}");
    }
    session
}

/// `--into FILE`: write the export rendering as FILE's owned block;
/// exit 1 (nothing on stdout) when it cannot be written.
fn write_into(path: &std::path::Path, text: &str) -> Exit {
    crate::session::write_into_file(path, text)
        .map(|()| 0)
        .map_err(Failure::runtime)
}

pub fn run_exec(a: ExecArgs) -> Exit {
    let mut req = request(&a.scope, crate::session::CacheMode::Off)?;
    if let Some(name) = &a.agent {
        match crate::session::agent_named(name) {
            Ok(agent) => req.options.agent = Some(agent),
            Err(known) => {
                return Err(Failure::usage(format!(
                    "unknown agent for --agent (known: {})",
                    known.join(", ")
                )));
            }
        }
    }
    let session = assemble_shown(&planned(&req)?);
    let mut env = crate::session::child_env(&session);
    if a.only.given() {
        let sensitive = crate::session::report::every_sensitive(&session);
        a.only.restrict("exec", &mut env, &sensitive);
    }
    let (cmd, args) = a.command.split_first().expect("clap requires CMD");
    if a.redact.redact {
        let masker = session_masker(&session);
        return Ok(crate::process::run_masked(cmd, args, &env, masker)?);
    }
    let Err(e) = crate::process::exec(cmd, args, &env);
    Err(e.into())
}

/// The masker of a session's sensitive values; `-v` says how many
/// variables it masks (names at `-vv`, never values).
fn session_masker(session: &crate::session::Session) -> std::sync::Arc<crate::mask::Masker> {
    masker_of(session.values_to_mask())
}

/// A masker of `pairs`, with `-v`'s line (and `-vv`'s names).
pub(crate) use crate::mask::logged_masker as masker_of;

/// `agentenv redact`: stdin through the session's masker to stdout.
pub fn run_redact(a: RedactArgs) -> Exit {
    let req = request(&a.scope, crate::session::CacheMode::Off)?;
    let session = assemble_shown(&planned(&req)?);
    let masker = session_masker(&session);
    let out = std::io::stdout()
        .lock()
        .as_fd()
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .map_err(|e| Failure::runtime(format!("stdout: {}", crate::fsutil::io_kind(&e))))?;
    let mut w = crate::mask::MaskWriter::new(masker, crate::mask::FdOut(out));
    let stdin = std::io::stdin();
    match crate::mask::pump(stdin.as_fd(), &mut w, None) {
        Ok(()) => Ok(0),
        // The reader went away: it has what it wanted (as `write_stdout`).
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
        Err(e) => Err(Failure::runtime(format!(
            "redact: {}",
            crate::fsutil::io_kind(&e)
        ))),
    }
}
/// `agentenv explain`.
pub fn run_explain(a: ExplainArgs) -> Exit {
    let plan = planned(&request(&a.scope, crate::session::CacheMode::Off)?)?;
    // The ~/.bashrc trap: say when a variable, not the cwd, decided the
    // project root (and which store was therefore not walked).
    let note = plan.root_note();
    let session = assemble_shown(&plan);
    let vars: Vec<OsString> = a.vars.iter().map(OsString::from).collect();
    let (reports, notes) = crate::session::report::explain(&session, &vars, note);
    let failed = crate::core::explain::failed_layers(&session.assembly);
    // The agent clients agentenv's hooks are wired into, as `status`
    // finds them (user settings, and the project's): names and paths only.
    let wired = crate::agent::install::wiring_found(plan.prepared().scope.project_root.as_deref());
    let extras = crate::session::report::Extras {
        notes,
        wiring_json: serde_json::to_value(&wired).expect("the wiring found serializes"),
        wiring_line: crate::agent::install::wiring_line(&wired),
    };
    let text = crate::session::report::explain_output(
        a.format == TextOrJson::Json,
        &reports,
        &failed,
        a.show_values,
        extras,
    );
    super::print(text.as_bytes())
}
