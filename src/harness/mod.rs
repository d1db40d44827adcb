//! The harness environment (`agentenv harness …`): one harness YAML declares
//! `env.runner` (host-side scripts) and `env.sandbox` (the agent sandbox),
//! composed through `base:` chains, `forge.<platform>` blocks and CEL-guarded
//! `overlays:`, with Go `os.Expand` expansion. It follows fullsend main as of
//! 2026-10-01 (docs/harness.md#harness-runners).
//!
//! Pipeline ([`resolve`]):
//! env files → platform → load the chain (`base.rs`) → per layer, deepest
//! first: merge the flat ancestor under it (`compose.rs`), check and apply
//! its own forge block and matching overlays (`select.rs`, `validate.rs`,
//! `cel.rs`) → `Validate` → `${}` validation → expansion (`expansion.rs`)
//! → file checks → Lint (`lint.rs`) → effective runner env, sandbox lines
//! (`sandbox.rs`). `explain.rs` is a view of the record kept on the way.
//!
//! Values are bytes from the host env to the child and the sandbox lines;
//! only JSON output converts (`json.rs`). No error or warning ever
//! contains a value read from a file or the environment: only files,
//! lines, fields, keys and variable names.

pub(crate) mod base;
pub(crate) mod cel;
pub(crate) mod compose;
pub(crate) mod expansion;
pub(crate) mod explain;
pub(crate) mod inputs;
pub(crate) mod json;
pub(crate) mod lint;
pub(crate) mod redact;
pub(crate) mod sandbox;
pub(crate) mod schema;
pub(crate) mod select;
pub(crate) mod sha256;
pub(crate) mod validate;
pub(crate) mod yaml;

use crate::core::{Assembly, ChangeSet, Env, LayerInfo, LayerKind};
use expansion::ValueMap;
use json::J;
pub use lint::Diagnostic;
use schema::{EnvMap, HostFile};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why a harness could not be resolved. Each variant holds the whole
/// message (files, lines, fields, keys and variable names; never a value),
/// which `Display` prints as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An `--env-file`, `--event` or `--config` input could not be read or
    /// is malformed.
    Input(String),
    /// The harness file or a file of its `base:` chain could not be loaded:
    /// unreadable, not YAML, not the schema, outside the fullsend dir,
    /// circular, too deep, or a URL base missing from the cache.
    Load(String),
    /// The harness does not hold: the platform, a field, a forge block, an
    /// overlay or its CEL guard, a `${}` reference, a host file.
    Invalid(String),
}

impl Error {
    pub(crate) fn input(msg: impl Into<String>) -> Error {
        Error::Input(msg.into())
    }

    pub(crate) fn load(msg: impl Into<String>) -> Error {
        Error::Load(msg.into())
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Error {
        Error::Invalid(msg.into())
    }

    /// The message, whatever the kind.
    pub fn message(&self) -> &str {
        match self {
            Error::Input(m) | Error::Load(m) | Error::Invalid(m) => m,
        }
    }

    /// The same kind of error with `; note: <note>` after its message.
    fn noted(self, note: &str) -> Error {
        self.map(|m| format!("{m}; note: {note}"))
    }

    /// The same kind of error with `prefix: ` in front of its message.
    fn wrap(self, prefix: &str) -> Error {
        self.map(|m| format!("{prefix}: {m}"))
    }

    /// The same kind of error with its message rewritten by `with`.
    fn map(self, with: impl Fn(String) -> String) -> Error {
        match self {
            Error::Input(m) => Error::Input(with(m)),
            Error::Load(m) => Error::Load(with(m)),
            Error::Invalid(m) => Error::Invalid(with(m)),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

/// How a key or variable name is shown in a message. A name made of
/// `[A-Za-z0-9_.-]` (at most 64 bytes) is shown in full; anything else can
/// carry a value (`"GH_TOKEN=ghp_…"` as a key), so only its leading
/// `[A-Za-z0-9_]` run is shown, followed by `…`.
pub(crate) fn shown_key(k: &str) -> String {
    let plain = k.len() <= 64
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if plain {
        return k.to_string();
    }
    let lead = crate::compat::ident::continue_len(k.as_bytes());
    format!("{}…", &k[..lead.min(64)])
}

/// What to resolve, and with which inputs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The harness file.
    pub file: PathBuf,
    /// `--forge`: the platform (else detected from the host env).
    pub forge: Option<String>,
    /// `--fullsend-dir` (else the parent of the harness file's directory).
    pub fullsend_dir: Option<PathBuf>,
    /// `--env-file`s, loaded in order into the host env.
    pub env_files: Vec<PathBuf>,
    /// `--event`: the event JSON CEL guards see.
    pub event: Option<PathBuf>,
    /// `--config`: the `config.yaml` CEL guards see.
    pub config: Option<PathBuf>,
    /// `--base-cache`: where URL bases are looked up by content hash.
    pub base_cache: Option<PathBuf>,
    /// `lint`: a missing host file is a finding (an error diagnostic), not
    /// a failure.
    pub files_as_findings: bool,
}

/// The resolved harness environment.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The selected platform (empty when none).
    pub platform: String,
    pub(crate) runner_env: ValueMap,
    pub(crate) env_runner: ValueMap,
    pub(crate) env_sandbox: ValueMap,
    pub(crate) effective_runner_env: ValueMap,
    /// The kept sandbox entries, sorted by key.
    pub sandbox_entries: Vec<(String, OsString)>,
    /// The sandbox `.env` lines (`export KEY='value'`), in that order.
    pub sandbox_lines: Vec<Vec<u8>>,
    pub(crate) host_files: Vec<HostFile>,
    /// The lint findings, in order.
    pub diagnostics: Vec<Diagnostic>,
    /// The sandbox skip messages (`warnings` in the JSON; also warning
    /// notes on `assembly`).
    pub warnings: Vec<String>,
    /// The host env after the `--env-file` loads.
    pub host_env: Env,
    /// The `run` child's environment as an assembly: the process env as
    /// base, a layer per `--env-file`, then the run's own layers (host
    /// variables not inherited, `runner_env`, `env.runner`, the deny list
    /// and `PYTHONDONTWRITEBYTECODE`). The child gets `current()`.
    pub assembly: Assembly,
    /// Every block that set env keys, in order, as core change sets (for
    /// `explain`; which `--env-file` line set a host variable is in
    /// `assembly`).
    pub(crate) trace: explain::Trace,
}

/// Default fullsend dir: the parent of the harness file's directory.
fn default_fullsend_dir(file: &Path) -> PathBuf {
    let abs = base::absolute(file);
    let dir = abs.parent().unwrap_or(Path::new("/"));
    dir.parent().unwrap_or(dir).to_path_buf()
}

/// Stack for a resolution: the CEL parser (an ANTLR grammar) recurses deeply
/// per nesting level, so it runs on its own thread with room to spare (the
/// memory is reserved, not committed). Nesting itself is capped in
/// [`cel::compile`].
pub(crate) const RESOLVE_STACK: usize = 256 << 20;

/// Resolve `opts.file` against the host environment `host`.
pub fn resolve(opts: &Options, host: &Env) -> Result<Resolved, Error> {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("harness-resolve".into())
            .stack_size(RESOLVE_STACK)
            .spawn_scoped(s, || resolve_here(opts, host));
        match worker {
            Ok(h) => h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // No thread to be had: resolve on this one.
            Err(_) => resolve_here(opts, host),
        }
    })
}

fn resolve_here(opts: &Options, host: &Env) -> Result<Resolved, Error> {
    let mut asm = Assembly::new(host.clone());
    let mut notes = Vec::new();
    for f in &opts.env_files {
        let cs = inputs::load_env_file(f, &mut notes)?;
        let layer = asm.add_layer(LayerInfo::new(LayerKind::DotenvFile).with_path(f));
        asm.apply(layer, &cs);
    }
    // A skipped env-file line often explains a later error (a `K` line
    // without `=` leaves `${K}` unset): the error carries those notes.
    let env_notes = notes.clone();
    resolve_rest(opts, asm, notes).map_err(|e| {
        let mut e = e;
        for n in &env_notes {
            e = e.noted(n);
        }
        e
    })
}

fn resolve_rest(
    opts: &Options,
    mut asm: Assembly,
    mut notes: Vec<String>,
) -> Result<Resolved, Error> {
    let host_env = asm.current().clone();
    let fullsend_dir = match &opts.fullsend_dir {
        Some(d) => base::absolute(d),
        None => default_fullsend_dir(&opts.file),
    };

    let sel = selection(opts, &host_env)?;
    let platform = sel.platform.clone();

    let src = base::BaseSource {
        root: &fullsend_dir,
        cache: opts.base_cache.as_deref(),
    };
    let links = base::load_chain(&opts.file, &src)?;

    // Errors after loading name the harness file first.
    let file = opts.file.display().to_string();
    let at = |e: Error| e.wrap(&file);
    let mut trace = explain::Trace {
        files: links.iter().map(|l| l.label.clone()).collect(),
        blocks: Vec::new(),
    };
    let h = flatten(links, &sel, &mut trace, &mut notes).map_err(at)?;
    validate::validate(&h, &sel.env).map_err(|e| at(e.wrap("invalid harness")))?;
    validate::validate_env(&h, &|n| expansion::is_set(n, &host_env))
        .map_err(|e| at(e.wrap("validating env")))?;
    let diagnostics = check_files(&h, &fullsend_dir, opts.files_as_findings).map_err(at)?;

    let x = expansion::Expander {
        fullsend_dir: fullsend_dir.as_os_str(),
        host: &host_env,
    };
    let cfg = h.cfg;
    let env = cfg.env.unwrap_or_default();
    let empty = EnvMap::new();
    let runner_env = x.map(cfg.runner_env.as_ref().unwrap_or(&empty));
    let env_runner = x.map(env.runner.as_ref().unwrap_or(&empty));
    let env_sandbox = x.map(env.sandbox.as_ref().unwrap_or(&empty));
    let mut effective = runner_env.clone();
    for (k, v) in &env_runner {
        effective.insert(k.clone(), v.clone());
    }
    run_layers(&mut asm, &opts.file, &runner_env, &env_runner);
    let (kept, warnings) = sandbox::sandbox_entries(&env_sandbox);
    // Skipped env-file lines, overlay evaluation failures, then the sandbox
    // skips: the run's warnings, recorded on its assembly.
    for w in notes.into_iter().chain(warnings.iter().cloned()) {
        asm.warn(w);
    }
    let sandbox_lines = kept
        .iter()
        .map(|(k, v)| sandbox::export_line(k, v))
        .collect();
    Ok(Resolved {
        platform,
        runner_env,
        env_runner,
        env_sandbox,
        effective_runner_env: effective,
        sandbox_entries: kept,
        sandbox_lines,
        host_files: cfg.host_files.unwrap_or_default(),
        diagnostics,
        warnings,
        host_env,
        assembly: asm,
        trace,
    })
}

/// The platform and what CEL guards see: `--config` (and its `forge`),
/// `--forge` or the host env's platform, `--event`.
fn selection(opts: &Options, host_env: &Env) -> Result<select::Selection, Error> {
    let config = match &opts.config {
        Some(p) => inputs::load_config(p)?,
        None => serde_json::Value::Object(Default::default()),
    };
    let config_forge = config.get("forge").and_then(|v| v.as_str());
    let platform = select::detect_platform(opts.forge.as_deref(), config_forge, host_env)?;
    let event = match &opts.event {
        Some(p) => inputs::load_event(p)?,
        None => serde_json::Value::Object(Default::default()),
    };
    Ok(select::Selection::new(
        platform,
        &event,
        &inputs::config_map(&config),
    ))
}

/// The chain as one harness: per file, deepest first, the flat ancestor
/// merged under it, then its own forge block and matching overlays (an
/// ancestor's error says which file).
fn flatten(
    links: Vec<base::Link>,
    sel: &select::Selection,
    trace: &mut explain::Trace,
    notes: &mut Vec<String>,
) -> Result<schema::Harness, Error> {
    let mut flat: Option<schema::Harness> = None;
    for (idx, link) in links.into_iter().enumerate().rev() {
        let mut h = link.harness;
        trace.record(idx, explain::Block::Top, &h.cfg);
        if let Some(ancestor) = flat.take() {
            compose::merge_base_into_child(&ancestor, &mut h);
        }
        let child = idx == 0;
        select::resolve_layer(&mut h, sel, child, idx, trace, notes).map_err(|e| {
            if child {
                e
            } else {
                e.wrap(&format!("loading base chain: {}", link.label))
            }
        })?;
        flat = Some(h);
    }
    Ok(flat.expect("a chain has a file"))
}

/// The lint findings, and the host files' sources checked on disk: a
/// missing one is an error, or with `as_findings` (`lint`) one more
/// finding.
fn check_files(
    h: &schema::Harness,
    fullsend_dir: &Path,
    as_findings: bool,
) -> Result<Vec<Diagnostic>, Error> {
    let resolve_src = |s: &str| -> String {
        if s.contains("${") || Path::new(s).is_absolute() {
            s.to_string()
        } else {
            base::clean(&fullsend_dir.join(s))
                .to_string_lossy()
                .into_owned()
        }
    };
    let mut diagnostics = lint::lint(h, &resolve_src);
    for (i, message) in validate::missing_files(h, &resolve_src) {
        if !as_findings {
            return Err(Error::invalid(format!(
                "validating files: host_files[{i}].src: {message}"
            )));
        }
        diagnostics.push(lint::Diagnostic {
            error: true,
            field: format!("host_files[{i}].src"),
            message,
        });
    }
    Ok(diagnostics)
}

/// The `run` child's layers over the host env (as fullsend's `run.go`): host
/// variables it never inherits removed; `runner_env` then `env.runner` (runner
/// wins) without `TRACEPARENT` and the GitLab token names; the deny list
/// removed even when declared; `PYTHONDONTWRITEBYTECODE=1`.
fn run_layers(asm: &mut Assembly, file: &Path, runner_env: &ValueMap, env_runner: &ValueMap) {
    let mut cs = ChangeSet::new();
    for k in asm.current().keys() {
        if not_inherited(k.as_bytes()) {
            cs.remove(k.clone());
        }
    }
    let layer =
        asm.add_layer(LayerInfo::new(LayerKind::Harness).with_level("not inherited by run"));
    asm.apply(layer, &cs);
    for (level, m) in [("runner_env", runner_env), ("env.runner", env_runner)] {
        let mut cs = ChangeSet::new();
        for (k, v) in m {
            if k != "TRACEPARENT" && !dropped_entry(k) {
                cs.set(OsString::from(k), v.clone());
            }
        }
        let layer = asm.add_layer(
            LayerInfo::new(LayerKind::Harness)
                .with_path(file)
                .with_level(level),
        );
        asm.apply(layer, &cs);
    }
    let mut cs = ChangeSet::new();
    for k in expansion::DENIED {
        if asm.current().contains_key(OsStr::new(k)) {
            cs.remove(k);
        }
    }
    cs.set("PYTHONDONTWRITEBYTECODE", "1");
    let layer = asm.add_layer(LayerInfo::new(LayerKind::Harness).with_level("run child"));
    asm.apply(layer, &cs);
}

/// Host variables the `run` child never inherits (they still expand, and reach
/// the child when `env.runner` declares them), as in fullsend's `run.go`.
fn not_inherited(name: &[u8]) -> bool {
    matches!(
        name,
        b"JIRA_TOKEN" | b"JIRA_USER_EMAIL" | b"OTEL_EXPORTER_OTLP_HEADERS"
    ) || (name.starts_with(b"OTEL_EXPORTER_OTLP_") && name.ends_with(b"_HEADERS"))
}

/// Runner env entries dropped from the `run` child (GitLab credentials are the
/// runner's own business), as in fullsend's `run.go`.
fn dropped_entry(name: &str) -> bool {
    name == "GITLAB_TOKEN" || name == "FULLSEND_FORGE_TOKEN" || name.starts_with("FULLSEND_GITLAB_")
}

fn map_json(m: &ValueMap) -> J {
    J::Obj(
        m.iter()
            .map(|(k, v)| (k.clone(), J::str(v.as_bytes())))
            .collect(),
    )
}

impl Resolved {
    /// `harness explain`'s reports, on the core provenance view: every
    /// variable of `runner_env`, `env.runner`, `env.sandbox` and the
    /// effective runner env (only those in `only` when it is not empty),
    /// each with the map as its scope, a touch per block that set it and
    /// the sources of its references.
    pub fn explain(&self, only: &[String]) -> Vec<crate::core::explain::VarReport> {
        explain::report(self, only)
    }

    /// `harness explain` as text (values only with `show_values`).
    pub fn explain_text(&self, only: &[String], show_values: bool) -> String {
        explain::render_text(self, only, show_values)
    }

    /// `harness explain --format json` (values only with `show_values`).
    pub fn explain_json(&self, only: &[String], show_values: bool) -> String {
        explain::render_json(self, only, show_values)
    }

    /// The `resolve` JSON (docs/harness.md#what-each-command-does), as text.
    pub fn to_json_string(&self) -> String {
        let files = self
            .host_files
            .iter()
            .map(|f| {
                J::Obj(vec![
                    ("src".into(), J::str(&f.src)),
                    ("dest".into(), J::str(&f.dest)),
                    ("expand".into(), J::Bool(f.expand)),
                    ("optional".into(), J::Bool(f.optional)),
                ])
            })
            .collect();
        let strs = |v: &[String]| J::Arr(v.iter().map(J::str).collect());
        json::to_string(&J::Obj(vec![
            ("platform".into(), J::str(&self.platform)),
            ("runner_env".into(), map_json(&self.runner_env)),
            (
                "env".into(),
                J::Obj(vec![
                    ("runner".into(), map_json(&self.env_runner)),
                    ("sandbox".into(), map_json(&self.env_sandbox)),
                ]),
            ),
            (
                "effective_runner_env".into(),
                map_json(&self.effective_runner_env),
            ),
            (
                "sandbox_lines".into(),
                J::Arr(self.sandbox_lines.iter().map(J::str).collect()),
            ),
            ("host_files".into(), J::Arr(files)),
            (
                "diagnostics".into(),
                strs(
                    &self
                        .diagnostics
                        .iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>(),
                ),
            ),
            ("warnings".into(), strs(&self.warnings)),
        ]))
    }

    /// The `resolve` JSON as a value (for tests and the fuzz target). A
    /// value that is not UTF-8 is written as a lone surrogate escape, which
    /// serde_json refuses: then this is `Null`; use
    /// [`Resolved::to_json_string`] for the exact output.
    pub fn to_json(&self) -> serde_json::Value {
        let s = self.to_json_string();
        serde_json::from_str(&s).unwrap_or(serde_json::Value::Null)
    }

    /// A runner env name that an environment cannot carry (empty, or with
    /// `=` or NUL), shown up to its valid prefix.
    pub fn unpassable_name(&self) -> Option<String> {
        self.effective_runner_env
            .keys()
            .find(|k| k.is_empty() || k.contains('=') || k.contains('\0'))
            .map(|k| shown_key(k))
    }

    /// The child environment of `harness run` (as fullsend's `run.go`): the
    /// host env (after the env files) without the JIRA / OTLP-header secrets,
    /// plus the effective runner env (runner wins) except `TRACEPARENT` and
    /// the GitLab token names, without the deny list, and
    /// `PYTHONDONTWRITEBYTECODE=1`.
    pub fn child_env(&self) -> &Env {
        self.assembly.current()
    }

    /// The sandbox file in `dotenv` format, or the first key whose value the
    /// project's dotenv grammar cannot carry (not UTF-8 included).
    pub fn sandbox_dotenv(&self) -> Result<String, String> {
        let mut out = String::new();
        for (k, v) in &self.sandbox_entries {
            let line = v
                .to_str()
                .and_then(|v| crate::dotenv::write_value(k, v))
                .ok_or_else(|| k.clone())?;
            out.push_str(&line);
            out.push('\n');
        }
        Ok(out)
    }

    /// The sandbox file in `export` format.
    pub fn sandbox_export(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for l in &self.sandbox_lines {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
        out
    }
}
