//! The harness environment (`agentenv harness …`): one harness YAML
//! declares `env.runner` (host-side scripts) and `env.sandbox` (the agent
//! sandbox), composed through `base:` chains, `forge.<platform>` blocks and
//! CEL-guarded `overlays:`, with Go `os.Expand` expansion.
//!
//! Pipeline ([`resolve`]), as the reference runner does it:
//! env files → platform → load + base chain → forge key check → overlay
//! checks → ResolveForge → ResolveOverlays → Validate → `${}` validation →
//! expansion → file checks → Lint → effective runner env → sandbox lines.
//!
//! No error or warning ever contains a value read from a file or the
//! environment: only files, lines, fields, keys and variable names.

pub mod compose;
pub mod forge;
pub mod inputs;
pub mod overlays;
pub mod sandbox;
pub mod schema;
pub mod sha256;
pub mod validate;
pub mod yaml;

use crate::core::Env;
use schema::{EnvMap, HostFile};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A harness error: a complete, value-free message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    msg: String,
}

impl Error {
    pub fn new(msg: impl Into<String>) -> Error {
        Error { msg: msg.into() }
    }

    fn wrap(self, prefix: &str) -> Error {
        Error {
            msg: format!("{prefix}: {}", self.msg),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for Error {}

/// What to resolve, and with which inputs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub file: PathBuf,
    pub forge: Option<String>,
    pub fullsend_dir: Option<PathBuf>,
    pub env_files: Vec<PathBuf>,
    pub event: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub base_cache: Option<PathBuf>,
}

/// The resolved harness environment.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub platform: String,
    pub fullsend_dir: PathBuf,
    pub runner_env: EnvMap,
    pub env_runner: EnvMap,
    pub env_sandbox: EnvMap,
    pub effective_runner_env: EnvMap,
    /// The kept sandbox entries, sorted by key.
    pub sandbox_entries: Vec<(String, String)>,
    pub sandbox_lines: Vec<String>,
    pub host_files: Vec<HostFile>,
    pub diagnostics: Vec<sandbox::Diagnostic>,
    /// The sandbox skip messages (`warnings` in the JSON).
    pub warnings: Vec<String>,
    /// Other warnings, for stderr only: overlay evaluation failures and
    /// missing host files.
    pub notes: Vec<String>,
    /// The host env after the `--env-file` loads.
    pub host_env: Env,
}

/// Default fullsend dir: the parent of the harness file's directory.
fn default_fullsend_dir(file: &Path) -> PathBuf {
    let abs = compose::absolute(file);
    let dir = abs.parent().unwrap_or(Path::new("/"));
    dir.parent().unwrap_or(dir).to_path_buf()
}

/// Stack for a resolution: the CEL parser (an ANTLR grammar) recurses deeply
/// per nesting level, so it runs on its own thread with room to spare (the
/// memory is reserved, not committed). Nesting itself is capped in
/// [`overlays::compile`].
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
    let mut host_env = host.clone();
    for f in &opts.env_files {
        inputs::load_env_file(f, &mut host_env)?;
    }
    let lookup = |name: &str| -> Option<String> {
        host_env
            .get(&OsString::from(name))
            .map(|v| v.to_string_lossy().into_owned())
    };

    let fullsend_dir = match &opts.fullsend_dir {
        Some(d) => compose::absolute(d),
        None => default_fullsend_dir(&opts.file),
    };
    let fullsend_str = fullsend_dir.to_string_lossy().into_owned();

    let config = match &opts.config {
        Some(p) => inputs::load_config(p)?,
        None => serde_json::Value::Object(Default::default()),
    };
    let config_forge = config.get("forge").and_then(|v| v.as_str());
    let platform = forge::detect_platform(opts.forge.as_deref(), config_forge, lookup)?;
    let event = match &opts.event {
        Some(p) => inputs::load_event(p)?,
        None => serde_json::Value::Object(Default::default()),
    };

    let src = compose::BaseSource {
        root: &fullsend_dir,
        cache: opts.base_cache.as_deref(),
    };
    let mut h = compose::load_with_base(&opts.file, &src)?;

    // Errors after loading name the harness file first.
    let file = opts.file.display().to_string();
    let at = |e: Error| e.wrap(&file);
    forge::validate_forge_keys(&h).map_err(|e| at(e.wrap("invalid harness")))?;
    forge::validate_overlays(&h).map_err(|e| at(e.wrap("invalid harness")))?;
    forge::resolve_forge(&mut h, &platform).map_err(at)?;
    let mut notes = Vec::new();
    forge::resolve_overlays(
        &mut h,
        &overlays::json_to_cel(&event),
        &platform,
        &overlays::json_to_cel(&config),
        &mut notes,
    )
    .map_err(at)?;
    validate::validate(&h).map_err(|e| at(e.wrap("invalid harness")))?;
    validate::validate_env(&h, &lookup).map_err(|e| at(e.wrap("validating env")))?;
    let map = validate::expander(&fullsend_str, &lookup);
    validate::expand_harness(&mut h, &map);

    let resolve_src = |s: &str| -> String {
        if s.contains("${") || Path::new(s).is_absolute() {
            s.to_string()
        } else {
            compose::clean(&fullsend_dir.join(s))
                .to_string_lossy()
                .into_owned()
        }
    };
    // ValidateFilesExist for host_files: reported, not fatal (see docs).
    for (i, f) in h.cfg.host_files.iter().flatten().enumerate() {
        if f.optional || f.src.contains("${") {
            continue;
        }
        let p = resolve_src(&f.src);
        if let Err(e) = std::fs::metadata(&p) {
            notes.push(format!(
                "host_files[{i}].src: stat {p}: {}",
                crate::process::io_kind(&e).to_lowercase()
            ));
        }
    }

    let diagnostics = sandbox::lint(&h, &resolve_src);

    let cfg = h.cfg;
    let env = cfg.env.unwrap_or_default();
    let runner_env = cfg.runner_env.unwrap_or_default();
    let env_runner = env.runner.unwrap_or_default();
    let env_sandbox = env.sandbox.unwrap_or_default();
    let mut effective = runner_env.clone();
    for (k, v) in &env_runner {
        effective.insert(k.clone(), v.clone());
    }
    let (kept, warnings) = sandbox::sandbox_entries(&env_sandbox);
    let sandbox_lines = kept
        .iter()
        .map(|(k, v)| sandbox::export_line(k, v))
        .collect();
    Ok(Resolved {
        platform,
        fullsend_dir,
        runner_env,
        env_runner,
        env_sandbox,
        effective_runner_env: effective,
        sandbox_entries: kept,
        sandbox_lines,
        host_files: cfg.host_files.unwrap_or_default(),
        diagnostics,
        warnings,
        notes,
        host_env: host_env.clone(),
    })
}

impl Resolved {
    /// The `resolve` JSON (SPEC §7).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "platform": self.platform,
            "runner_env": self.runner_env,
            "env": {"runner": self.env_runner, "sandbox": self.env_sandbox},
            "effective_runner_env": self.effective_runner_env,
            "sandbox_lines": self.sandbox_lines,
            "host_files": self.host_files,
            "diagnostics": self.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
            "warnings": self.warnings,
        })
    }

    /// The child environment of `harness run`: the host env (after the env
    /// files) plus the effective runner env (runner wins), with the OIDC
    /// keys removed and a declared `TRACEPARENT` not applied.
    pub fn child_env(&self) -> Env {
        let mut env = self.host_env.clone();
        for (k, v) in &self.effective_runner_env {
            if k == "TRACEPARENT" {
                continue;
            }
            env.insert(OsString::from(k), OsString::from(v));
        }
        for k in validate::OIDC_KEYS {
            env.remove(&OsString::from(k));
        }
        env
    }

    /// The sandbox file in `dotenv` format, or the first key whose value the
    /// project's dotenv grammar cannot carry.
    pub fn sandbox_dotenv(&self) -> Result<String, String> {
        let mut out = String::new();
        for (k, v) in &self.sandbox_entries {
            match crate::dotenv::write_value(k, v) {
                Some(line) => {
                    out.push_str(&line);
                    out.push('\n');
                }
                None => return Err(k.clone()),
            }
        }
        Ok(out)
    }

    /// The sandbox file in `export` format.
    pub fn sandbox_export(&self) -> String {
        let mut out = String::new();
        for l in &self.sandbox_lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }
}
