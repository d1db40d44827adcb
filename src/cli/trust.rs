//! `agentenv allow [DIR]`, `agentenv deny [DIR]`, `agentenv hook SHELL`
//! (docs/shells.md#the-shell-hook-and-trust). The trust gate itself is the
//! session's (`session::plan`).

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
    /// (Internal.) What the last load changed, names only (`+A ~B -C`);
    /// absent (an older integration): no load line.
    #[arg(long = "shown", hide = true)]
    pub shown: Option<String>,
}

/// The store `allow`/`deny` act on.
pub(crate) fn store_for(dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let base = crate::core::process_env();
    let cwd = super::current_dir()?;
    match dir {
        Some(d) => {
            let d = cwd.join(d);
            if d.file_name() == Some(std::ffi::OsStr::new(".agents")) && d.is_dir() {
                return Ok(d);
            }
            Ok(d.join(".agents"))
        }
        None => {
            let home = crate::core::get(&base, "HOME").map(PathBuf::from);
            // In $HOME the .agents there is the user store: it loads
            // without an allow (the hook never looks at $HOME as a project).
            if home.as_deref().is_some_and(|h| h == cwd) && cwd.join(".agents").is_dir() {
                return Err(Failure::runtime(format!(
                    "{} is your user store: it loads without an allow (only a project's .agents needs one); to allow a project, run agentenv allow in it or name it: agentenv allow DIR",
                    cwd.join(".agents").display()
                )));
            }
            match crate::session::trust::find_project_root(&cwd, home.as_deref()) {
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
    act: impl FnOnce(&Path, &Path) -> Result<T, crate::session::trust::TrustError>,
) -> Result<(PathBuf, T), Failure> {
    let store = store_for(dir)?;
    let base = crate::core::process_env();
    match crate::session::trust::state_dir(&base).and_then(|s| act(&s, &store)) {
        Ok(t) => Ok((store, t)),
        Err(e) => Err(Failure::runtime(format!(
            "cannot {verb} {}: {e}",
            store.display()
        ))),
    }
}

pub fn run_allow(a: TrustArgs) -> Exit {
    let bounds = crate::session::trust::Bounds::from_env(&crate::core::process_env());
    let (_, real) = on_store(a.dir.as_deref(), "allow", |s, store| {
        crate::session::allow(s, store, bounds)
    })?;
    super::say(format_args!("allowed {}", real.display()));
    Ok(0)
}

pub fn run_deny(a: TrustArgs) -> Exit {
    let (store, removed) = on_store(a.dir.as_deref(), "deny", crate::session::trust::deny)?;
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
            shown: a.shown,
        };
        crate::hook::load(&input, crate::core::process_env())
            .map_err(|e| Failure::runtime(format!("hook: {e}")))?
    } else {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .unwrap_or_else(|| PathBuf::from("agentenv"));
        crate::hook::integration(shell, &exe)
    };
    super::print(text.as_bytes())
}
