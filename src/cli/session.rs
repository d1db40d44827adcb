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
    // --into writes the export format: `auto` means export whatever shell
    // is detected; an explicit other format is refused before any layer
    // runs (the reference checks after rendering and storing the cache
    // entry, which a later hit then printed on stdout).
    let format = match (&a.into, choice) {
        (None, c) => c.resolve(),
        (Some(_), crate::render::FormatChoice::Auto) => crate::render::Format::Export,
        (Some(_), crate::render::FormatChoice::Named { format, .. })
            if format == crate::render::Format::Export =>
        {
            format
        }
        (Some(_), crate::render::FormatChoice::Named { format, .. }) => {
            return Err(Failure::runtime(format!(
                "--into writes the export format only, not '{}'",
                format.name()
            )));
        }
    };
    // --cache: the probe runs before any layer (fast path); the key has
    // the format as given.
    let cache = if a.cache {
        let given = match choice {
            crate::render::FormatChoice::Auto => format.name(),
            crate::render::FormatChoice::Named { given, .. } => given,
        };
        crate::session::CacheMode::Replay {
            format: given.to_string(),
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
        let failed = session.reference_names(false);
        if !failed.is_empty() {
            return Err(Failure::runtime(format!(
                "--strict: {} secret reference(s) not resolved: {}",
                failed.len(),
                failed.join(", ")
            )));
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
            super::print(add_masks(&session, &view).as_bytes())?;
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

/// `::add-mask::VALUE` lines (the runner's workflow command) for every
/// rendered assignment that is sensitive and masked
/// (docs/masking.md#masked-or-not): each line of a value (split at LF, CR, CRLF) of at least 4
/// bytes, once, with `%` written `%25` (the runner unescapes `%25`, `%0D`, `%0A`).
/// These lines hold the values on stdout by design: the runner consumes
/// them and hides every later occurrence in the job's logs.
fn add_masks(session: &crate::session::Session, view: &crate::render::View) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for (k, v) in &view.assignments {
        if session.is_public(k) || !session.masking(k).is_masked() {
            continue;
        }
        let v = String::from_utf8_lossy(v.as_encoded_bytes());
        for line in v.split(['\n', '\r']) {
            if line.len() >= crate::core::MIN_MASKED_LEN && seen.insert(line.to_string()) {
                out.push_str("::add-mask::");
                out.push_str(&line.replace('%', "%25"));
                out.push('\n');
            }
        }
    }
    out
}

/// Run the layers, then print what they had to say (warnings; `-v` a line
/// per env file; `-vv` how each plain file was evaluated), in order.
pub(crate) fn assemble_shown(plan: &crate::session::Plan) -> crate::session::Session {
    let session = plan.assemble();
    crate::log::notes(session.assembly.notes());
    warn_readable_store_files(&session);
    session
}

/// A plain store file that gave a sensitive variable its value and that
/// group or others can read: one warning per file (as ssh refuses such a
/// key), naming the variables, never a value.
fn warn_readable_store_files(session: &crate::session::Session) {
    use crate::core::LayerKind;
    use std::os::unix::fs::PermissionsExt;
    let a = &session.assembly;
    let mut files: Vec<(std::path::PathBuf, Vec<String>)> = Vec::new();
    for (name, _) in session.sensitive_values() {
        let Some(touch) = a.touches(std::ffi::OsStr::new(&name)).last() else {
            continue;
        };
        let Some(layer) = a.layers().get(touch.layer) else {
            continue;
        };
        if layer.info.kind != LayerKind::PlainFile {
            continue;
        }
        let Some(path) = &layer.info.path else {
            continue;
        };
        match files.iter_mut().find(|(p, _)| p == path) {
            Some((_, names)) => names.push(name),
            None => files.push((path.clone(), vec![name])),
        }
    }
    for (path, names) in files {
        let Ok(m) = std::fs::metadata(&path) else {
            continue;
        };
        let mode = m.permissions().mode() & 0o777;
        if mode & 0o044 != 0 {
            crate::warn!(
                "{} holds sensitive values ({}) and is readable by group or others (mode {mode:04o}); run chmod 600 {}",
                path.display(),
                names.join(", "),
                path.display()
            );
        }
    }
}

/// `--into FILE`: write the export rendering as FILE's owned block;
/// exit 1 (nothing on stdout) when it cannot be written.
fn write_into(path: &std::path::Path, text: &str) -> Exit {
    match crate::session::write_into(path, text) {
        Ok(()) => Ok(0),
        Err(e) => {
            let why = if e.kind() == std::io::ErrorKind::InvalidData {
                "it is not UTF-8".to_string()
            } else {
                crate::fsutil::io_kind(&e)
            };
            Err(Failure::runtime(format!(
                "--into {}: cannot write it ({why})",
                path.display()
            )))
        }
    }
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
        // Every sensitive value, masked or not, plus those a masker would
        // take from the caller's copy of the stores.
        let mut sensitive = session.sensitive_unmasked_too();
        sensitive.extend(session.held_values());
        sensitive.sort();
        sensitive.dedup_by(|a, b| a.0 == b.0);
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
/// `wiring` is `status`'s finder of the client wiring
/// ([`super::agent::wiring_found`], passed in: `agent` imports this module).
pub fn run_explain(
    a: ExplainArgs,
    wiring: fn(Option<&std::path::Path>) -> Vec<serde_json::Value>,
) -> Exit {
    use crate::core::explain;
    let json = a.format == TextOrJson::Json;
    let plan = planned(&request(&a.scope, crate::session::CacheMode::Off)?)?;
    // The ~/.bashrc trap: say when a variable, not the cwd, decided the
    // project root (and which store was therefore not walked).
    let note = plan.root_note();
    let session = assemble_shown(&plan);
    let vars: Vec<OsString> = a.vars.iter().map(OsString::from).collect();
    let mut reports = explain::report(&session.assembly, &vars);
    for r in reports.iter_mut().filter(|r| r.value.is_some()) {
        r.sensitivity = Some(session.sensitivity(&r.name));
    }
    // A secret reference's touch says what it is and where the value
    // came from; one that did not resolve is a note (no touch).
    let mut notes: Vec<String> = note.into_iter().collect();
    for rec in session.references() {
        let name = std::ffi::OsStr::new(&rec.name);
        // The store's or the overlay's file (a store and its overlay may
        // both reference a name, on the same line).
        let file = rec
            .store
            .join("agentenv.toml")
            .to_string_lossy()
            .into_owned();
        match &rec.outcome {
            Ok((source, at)) => {
                let touch = reports
                    .iter_mut()
                    .filter(|r| r.name == name)
                    .flat_map(|r| r.touches.iter_mut())
                    .filter(|t| t.layer.kind == crate::core::LayerKind::References.as_str())
                    .find(|t| t.line == Some(rec.line) && t.layer.file == Some(file.clone()));
                if let Some(t) = touch {
                    t.detail = Some(format!(
                        "from {}: resolved from {} (fetched {})",
                        rec.text,
                        source.as_str(),
                        crate::refs::clock(*at)
                    ));
                }
            }
            Err(why) => {
                if vars.is_empty() || vars.iter().any(|v| v == name) {
                    notes.push(format!(
                        "{}: from {} ({}:{}): not resolved: {why}",
                        rec.name, rec.text, file, rec.line
                    ));
                }
            }
        }
    }
    let failed = explain::failed_layers(&session.assembly);
    // The agent clients agentenv's hooks are wired into, as `status`
    // finds them (user settings, and the project's): names and paths only.
    let wired = wiring(plan.prepared().scope.project_root.as_deref());
    let text = if json {
        let mut m = explain::to_json(&reports, &failed, a.show_values);
        if !notes.is_empty() {
            m.insert("notes".into(), serde_json::json!(notes));
        }
        m.insert("agent_wiring".into(), serde_json::Value::Array(wired));
        let mut out = serde_json::to_string_pretty(&serde_json::Value::Object(m))
            .unwrap_or_else(|_| "{}".into());
        out.push('\n');
        out
    } else {
        let mut text = explain::render_text_with_failures(&reports, &failed, a.show_values);
        if !notes.is_empty() && !text.is_empty() {
            text.push('\n');
        }
        for n in notes {
            text.push_str(&format!("note: {n}\n"));
        }
        if let Some(line) = wiring_line(&wired) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&line);
        }
        text
    };
    super::print(text.as_bytes())
}

/// `explain`'s trailing line naming `wiring_found`'s finds:
/// `agent wiring: claude (user: FILE), gemini (project: FILE)`; `None`
/// when none was found. Paths with control characters escaped.
fn wiring_line(found: &[serde_json::Value]) -> Option<String> {
    let esc = |v: &serde_json::Value| {
        crate::log::escape_controls(v.as_str().unwrap_or(""), false).into_owned()
    };
    let items: Vec<String> = found
        .iter()
        .map(|x| {
            format!(
                "{} ({}: {})",
                esc(&x["client"]),
                esc(&x["scope"]),
                esc(&x["file"])
            )
        })
        .collect();
    (!items.is_empty()).then(|| format!("agent wiring: {}\n", items.join(", ")))
}
