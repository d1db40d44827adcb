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
    /// Output format.
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
    /// Render only public variables: the ones agentenv computes and the
    /// ones a store's agentenv.toml declares public. Sensitive ones are
    /// left out silently (-v names them); removals are kept.
    #[arg(long = "public-only")]
    pub public_only: bool,
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
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
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
pub fn scope_options(scope: &ScopeArgs) -> Result<crate::session::Options, Failure> {
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

/// [`scope_options`] with the trust gate applied (`--require-trust`).
fn options(scope: &ScopeArgs) -> Result<crate::session::Options, Failure> {
    let mut opts = scope_options(scope)?;
    super::trust::gate(scope.require_trust, &mut opts, &crate::core::process_env());
    Ok(opts)
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
    let opts = options(&a.scope)?;
    let base = crate::core::process_env();
    let prepared = prepare_traced(&opts, &base)?;
    // --cache: replay before any layer runs (fast path, issue 4). With
    // --into the replayed bytes go into the file, never to stdout.
    let cache = if a.cache {
        let given = match choice {
            crate::render::FormatChoice::Auto => format.name(),
            crate::render::FormatChoice::Named { given, .. } => given,
        };
        match cache_lookup(&prepared, &base, given, a.diff, a.public_only) {
            CacheState::Hit(bytes) => {
                return match &a.into {
                    // An entry is UTF-8 (lookup checks it).
                    Some(path) => write_into(path, &String::from_utf8_lossy(&bytes)),
                    None => super::print(&bytes),
                };
            }
            state => state,
        }
    } else {
        CacheState::Off
    };
    let session = assemble_shown(prepared, base);
    let mut view = session_view(&session, a.diff);
    if a.public_only {
        let left_out = keep_public(&session, &mut view);
        if !left_out.is_empty() {
            crate::info!(
                "--public-only left out {} variable(s) that are not public: {}",
                left_out.len(),
                left_out.join(", ")
            );
        }
    }
    let text = super::render_shown(format, &view);
    if let CacheState::Miss { dir, key } = &cache {
        crate::session::cache::store(dir, key, text.as_bytes());
    }
    if let Some(path) = &a.into {
        return write_into(path, &text);
    }
    super::print(text.as_bytes())
}

/// What `--cache` found.
enum CacheState {
    Off,
    Hit(Vec<u8>),
    Miss { dir: PathBuf, key: String },
}

fn cache_lookup(
    prepared: &crate::session::Prepared,
    base: &crate::core::Env,
    format_given: &str,
    diff: bool,
    public_only: bool,
) -> CacheState {
    use crate::session::cache;
    if prepared.scope.user_refused.is_some() || foreign_parent(&prepared.scope.user_root) {
        // Never a file of ours in a store we do not load (another user's),
        // nor a new store in another user's directory.
        crate::warn!("the user store is not loaded or not ours to create; running uncached");
        return CacheState::Off;
    }
    let dir = cache::dir_for(&prepared.scope.user_root);
    if let Err(why) = cache::usable_dir(&dir) {
        crate::warn!(
            "cache directory {} {}; running uncached",
            dir.display(),
            why.describe()
        );
        return CacheState::Off;
    }
    let key = cache::key_with(prepared, base, format_given, diff, public_only);
    match cache::lookup(&dir, &key) {
        Some(bytes) => {
            crate::info!("cache hit: {} (no layer runs)", dir.join(&key).display());
            CacheState::Hit(bytes)
        }
        None => {
            if crate::log::level() >= 1 {
                crate::info!(
                    "cache miss: {}",
                    crate::session::trace::cache_miss_reason(&dir, &key)
                );
            }
            CacheState::Miss { dir, key }
        }
    }
}

/// The user store is missing and its parent directory belongs to another
/// user (root with that user's HOME): the cache would create a store there.
fn foreign_parent(store: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    if store.exists() {
        return false;
    }
    let euid = rustix::process::geteuid().as_raw();
    store
        .parent()
        .and_then(|p| std::fs::metadata(p).ok())
        .is_some_and(|m| m.uid() != euid)
}

/// `session::prepare`, its warnings (taken out of it, so the assembly does
/// not repeat them), then `-v`'s lines about the project root, the stores
/// and overlays (and at `-vv` every missing candidate).
pub(crate) fn prepare_traced(
    opts: &crate::session::Options,
    base: &crate::core::Env,
) -> Result<crate::session::Prepared, Failure> {
    let mut p = crate::session::prepare(opts, base).map_err(Failure::runtime)?;
    crate::log::notes(&std::mem::take(&mut p.notes));
    if crate::log::level() >= 1 {
        crate::log::notes(&crate::session::trace::scope(
            &p,
            base,
            opts.project_root.is_some(),
        ));
    }
    Ok(p)
}

/// Run the layers, then print what they had to say (warnings; `-v` a line
/// per env file; `-vv` how each plain file was evaluated), in order.
pub(crate) fn assemble_shown(
    prepared: crate::session::Prepared,
    base: crate::core::Env,
) -> crate::session::Session {
    let session = prepared.assemble(base);
    crate::log::notes(session.assembly.notes());
    session
}

/// `--into FILE`: write the export rendering as FILE's owned block;
/// exit 1 (nothing on stdout) when it cannot be written.
fn write_into(path: &std::path::Path, text: &str) -> Exit {
    match crate::session::into::write_into(path, text) {
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

/// What `env` renders of an assembled session: `--diff` or full mode
/// (inherited `DOTAGENTS_*` hidden).
pub(crate) fn session_view(session: &crate::session::Session, diff: bool) -> crate::render::View {
    let base = session.assembly.base();
    let changes = session.assembly.result();
    if diff {
        crate::render::View::diff(base, changes)
    } else {
        crate::render::View::full(base, changes, Some("DOTAGENTS_"))
    }
}

/// `--public-only`: drop every assignment whose variable is not public
/// (a sensitive value a layer set, or a base-environment value no layer
/// set); removals carry no value and stay. Returns the names left out.
pub(crate) fn keep_public(
    session: &crate::session::Session,
    view: &mut crate::render::View,
) -> Vec<String> {
    let mut left_out = Vec::new();
    view.assignments.retain(|(k, _)| {
        let public = session.is_public(k);
        if !public {
            left_out.push(k.to_string_lossy().into_owned());
        }
        public
    });
    left_out
}

pub fn run_exec(a: ExecArgs) -> Exit {
    let mut opts = options(&a.scope)?;
    if let Some(name) = &a.agent {
        match crate::session::identity::lookup(name) {
            Some(agent) => opts.agent = Some(agent.name.to_string()),
            None => {
                let known: Vec<&str> = crate::session::identity::REGISTRY
                    .iter()
                    .map(|a| a.name)
                    .collect();
                return Err(Failure::usage(format!(
                    "unknown agent for --agent (known: {})",
                    known.join(", ")
                )));
            }
        }
    }
    let base = crate::core::process_env();
    let session = assemble_shown(prepare_traced(&opts, &base)?, base);
    let env = crate::session::child_env(&session);
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
    masker_of(super::masked::session_sensitive(session))
}

/// A masker of `pairs`, with `-v`'s line (and `-vv`'s names).
pub(crate) fn masker_of(pairs: Vec<(String, Vec<u8>)>) -> std::sync::Arc<crate::mask::Masker> {
    let short: Vec<&str> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty() && v.len() < crate::mask::MIN_LEN)
        .map(|(k, _)| k.as_str())
        .collect();
    crate::info!(
        "redact: masking {} sensitive variable{}",
        pairs.len() - short.len(),
        if pairs.len() - short.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    if !short.is_empty() {
        crate::info!(
            "redact: too short to mask (under {} bytes): {}",
            crate::mask::MIN_LEN,
            short.join(", ")
        );
    }
    if crate::log::level() >= 2 {
        let names: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        crate::debug!("redact: sensitive: {}", names.join(", "));
    }
    std::sync::Arc::new(crate::mask::Masker::new(pairs))
}

/// `agentenv redact`: stdin through the session's masker to stdout.
pub fn run_redact(a: RedactArgs) -> Exit {
    let opts = options(&a.scope)?;
    let base = crate::core::process_env();
    let session = assemble_shown(prepare_traced(&opts, &base)?, base);
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
pub fn run_explain(a: ExplainArgs) -> Exit {
    use crate::session::explain;
    let json = a.format == TextOrJson::Json;
    let opts = options(&a.scope)?;
    let base = crate::core::process_env();
    let prepared = prepare_traced(&opts, &base)?;
    // The ~/.bashrc trap: say when a variable, not the cwd, decided the
    // project root (and which store was therefore not walked).
    let note =
        crate::session::trace::project_root_note(&prepared, &base, opts.project_root.is_some());
    let session = assemble_shown(prepared, base);
    let vars: Vec<OsString> = a.vars.iter().map(OsString::from).collect();
    let mut reports = explain::report(&session.assembly, &vars);
    for r in reports.iter_mut().filter(|r| r.value.is_some()) {
        r.sensitivity = Some(session.sensitivity(&r.name));
    }
    let failed = explain::failed_layers(&session.assembly);
    let text = if json {
        let text = explain::render_json(&reports, &failed, a.show_values);
        match note {
            None => text,
            Some(n) => with_json_note(&text, &n),
        }
    } else {
        let mut text = explain::render_text_with_failures(&reports, &failed, a.show_values);
        if let Some(n) = note {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("note: {n}\n"));
        }
        text
    };
    super::print(text.as_bytes())
}

/// `explain --format json` with `"notes": [note]` added to the object.
fn with_json_note(text: &str, note: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(mut m)) => {
            m.insert("notes".into(), serde_json::json!([note]));
            let mut out = serde_json::to_string_pretty(&serde_json::Value::Object(m))
                .unwrap_or_else(|_| text.to_string());
            out.push('\n');
            out
        }
        _ => text.to_string(),
    }
}
