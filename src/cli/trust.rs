//! `agentenv allow [DIR]`, `agentenv deny [DIR]`, `agentenv hook SHELL`, and
//! the `--require-trust` gate of `env`/`exec`/`explain`
//! (README.md#the-shell-hook-and-trust).

use super::{Exit, Failure};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct TrustArgs {
    /// The project (its `.agents` is the store), or the `.agents` directory
    /// itself. Default: the nearest directory upwards holding `.agents`
    /// (not going above $HOME), as the shell hook finds it.
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// bash, zsh or fish.
    #[arg(value_name = "SHELL", index = 1)]
    pub shell: String,
    /// With SHELL claude or codex: the agent hook event, pre-tool-use or
    /// session-start (what `init claude` / `init codex` install).
    #[arg(value_name = "EVENT", index = 2)]
    pub event: Option<String>,
    /// (claude/codex session-start) Every value into the session env file,
    /// with a warning at each start (what `init --export-values` writes).
    #[arg(long = "export-values", hide = true)]
    pub export_values: bool,
    /// (Internal: claude/codex run) The cache entry of the command.
    #[arg(long = "entry", hide = true, value_name = "FILE")]
    pub entry: Option<std::path::PathBuf>,
    /// (Internal: run by the integration.) Print the shell code of one load.
    #[arg(long = "load", hide = true)]
    pub load: bool,
    /// (Internal.) The shell's pid, names its stamp file.
    #[arg(long = "pid", hide = true, default_value_t = 0)]
    pub pid: u32,
    /// (Internal.) The project root the last message was printed for.
    #[arg(long = "warned", hide = true, default_value = "")]
    pub warned: std::ffi::OsString,
}

/// The store `allow`/`deny` act on.
pub(crate) fn store_for(dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let base = crate::core::process_env();
    let cwd = super::current_dir()?;
    match dir {
        Some(d) => {
            let d = crate::session::paths::at(d, &cwd).to_path_buf();
            if d.file_name() == Some(std::ffi::OsStr::new(".agents")) && d.is_dir() {
                return Ok(d);
            }
            Ok(d.join(".agents"))
        }
        None => {
            let home = crate::core::get(&base, "HOME").map(PathBuf::from);
            match crate::trust::find_project_root(&cwd, home.as_deref()) {
                Some(r) => Ok(r.join(".agents")),
                None => Err(Failure::runtime(format!(
                    "no project here: neither {} nor a directory above it (below $HOME) holds .agents; name the project: agentenv allow DIR",
                    cwd.display()
                ))),
            }
        }
    }
}

/// `allow`/`deny`'s one step: `act` on the trust state directory and the
/// store of `dir`; a failure is `cannot VERB STORE: why`.
fn on_store<T>(
    dir: Option<&Path>,
    verb: &str,
    act: impl FnOnce(&Path, &Path) -> Result<T, crate::trust::TrustError>,
) -> Result<(PathBuf, T), Failure> {
    let store = store_for(dir)?;
    let base = crate::core::process_env();
    match crate::trust::state_dir(&base).and_then(|s| act(&s, &store)) {
        Ok(t) => Ok((store, t)),
        Err(e) => Err(Failure::runtime(format!(
            "cannot {verb} {}: {e}",
            store.display()
        ))),
    }
}

pub fn run_allow(a: TrustArgs) -> Exit {
    let bounds = crate::trust::Bounds::from_env(&crate::core::process_env());
    let (_, real) = on_store(a.dir.as_deref(), "allow", |s, store| {
        if crate::session::gate::foreign_link(store) {
            return Err(crate::trust::TrustError::ForeignLink(store.to_path_buf()));
        }
        crate::trust::allow(s, store, bounds)
    })?;
    super::say(format_args!("allowed {}", real.display()));
    Ok(0)
}

pub fn run_deny(a: TrustArgs) -> Exit {
    let (store, removed) = on_store(a.dir.as_deref(), "deny", crate::trust::deny)?;
    if removed {
        super::say(format_args!("denied {}", store.display()));
    } else {
        super::say(format_args!("{} was not allowed", store.display()));
    }
    Ok(0)
}

pub fn run_hook(a: HookArgs) -> Exit {
    let Some(shell) = crate::hook::Shell::parse(&a.shell) else {
        return Err(Failure::usage(format!(
            "hook: unknown shell {} (known: bash, zsh, fish)",
            crate::render::py_repr(&a.shell)
        )));
    };
    if a.event.is_some() {
        return Err(Failure::usage(format!(
            "hook {}: takes no EVENT (events are for claude and codex)",
            a.shell
        )));
    }
    let text = if a.load {
        let input = crate::hook::LoadInput {
            shell,
            pid: a.pid,
            warned: a.warned,
        };
        crate::hook::load(&input, crate::core::process_env())
            .map_err(|msg| Failure::runtime(format!("hook: {msg}")))?
    } else {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .unwrap_or_else(|| PathBuf::from("agentenv"));
        crate::hook::integration(shell, &exe)
    };
    super::print(text.as_bytes())
}

/// `--require-trust` / `AGENTENV_REQUIRE_TRUST=1` for `env`, `exec`,
/// `explain` (and `status`): when the scope's project store is not allowed
/// (or changed), warn and walk the other stores only (as `-g`); when it is,
/// load it from its real paths and the bytes digested
/// ([`crate::session::gate`]). Returns the decision, if one was made.
pub fn gate(
    require: bool,
    opts: &mut crate::session::Options,
    base: &crate::core::Env,
) -> Option<crate::session::gate::Decision> {
    let env_says =
        crate::core::get(base, "AGENTENV_REQUIRE_TRUST").is_some_and(|v| !v.is_empty() && v != "0");
    if !(require || env_says) || opts.global {
        return None;
    }
    let cwd = match &opts.cwd {
        Some(c) => c.clone(),
        None => std::env::current_dir().ok()?,
    };
    // A relative user store is not loaded while the gate is on.
    opts.user_store_refused = crate::session::gate::user_store_rule(opts, base, None);
    let input = crate::session::scope::ScopeInput {
        global: false,
        agents_dir: opts.agents_dir.clone(),
        project_root: opts.project_root.clone(),
        project_store: None,
        user_refused: opts.user_store_refused.clone(),
    };
    // Its warnings are the session's own; `prepare` shows them.
    let scope = crate::session::scope::Scope::resolve(&input, base, &cwd, &mut Vec::new()).ok()?;
    if scope.level != "project" || !scope.agents_root.is_dir() {
        return None; // the user store (collapse rule), or nothing to run
    }
    let root = scope.project_root.clone()?;
    let d = crate::session::gate::decide(&root, base, crate::session::gate::bounds(opts, base));
    if let Some(w) = d.warning() {
        crate::warn!("{w} (walking the other stores only)");
    }
    d.apply(opts, base);
    Some(d)
}
