//! `agentenv allow [DIR]`, `agentenv deny [DIR]`, `agentenv hook SHELL`,
//! and the `--require-trust` gate of `env`/`exec`/`explain` (SPEC §11).

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
    #[arg(value_name = "SHELL")]
    pub shell: String,
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
fn store_for(dir: Option<&Path>) -> Result<PathBuf, String> {
    let base = crate::core::process_env();
    let cwd = std::env::current_dir().map_err(|e| {
        format!(
            "cannot read the current directory: {}",
            crate::process::io_kind(&e)
        )
    })?;
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
                None => Err(format!(
                    "no project here: neither {} nor a directory above it (below $HOME) holds .agents; name the project: agentenv allow DIR",
                    cwd.display()
                )),
            }
        }
    }
}

pub fn run_allow(a: TrustArgs) -> i32 {
    let store = match store_for(a.dir.as_deref()) {
        Ok(s) => s,
        Err(msg) => {
            crate::error!("{msg}");
            return 1;
        }
    };
    let base = crate::core::process_env();
    let res = crate::trust::state_dir(&base).and_then(|s| crate::trust::allow(&s, &store));
    match res {
        Ok(real) => {
            if crate::log::level() >= 0 {
                eprintln!("agentenv: allowed {}", real.display());
            }
            0
        }
        Err(e) => {
            crate::error!("cannot allow {}: {e}", store.display());
            1
        }
    }
}

pub fn run_deny(a: TrustArgs) -> i32 {
    let store = match store_for(a.dir.as_deref()) {
        Ok(s) => s,
        Err(msg) => {
            crate::error!("{msg}");
            return 1;
        }
    };
    let base = crate::core::process_env();
    match crate::trust::state_dir(&base).and_then(|s| crate::trust::deny(&s, &store)) {
        Ok(removed) => {
            if crate::log::level() >= 0 {
                if removed {
                    eprintln!("agentenv: denied {}", store.display());
                } else {
                    eprintln!("agentenv: {} was not allowed", store.display());
                }
            }
            0
        }
        Err(e) => {
            crate::error!("cannot deny {}: {e}", store.display());
            1
        }
    }
}

pub fn run_hook(a: HookArgs) -> i32 {
    let Some(shell) = crate::hook::Shell::parse(&a.shell) else {
        crate::error!(
            "hook: unknown shell {} (known: bash, zsh, fish)",
            crate::render::py_repr(&a.shell)
        );
        return 2;
    };
    let text = if a.load {
        let input = crate::hook::LoadInput {
            shell,
            pid: a.pid,
            warned: a.warned,
        };
        match crate::hook::load(&input, crate::core::process_env()) {
            Ok(t) => t,
            Err(msg) => {
                crate::error!("hook: {msg}");
                return 1;
            }
        }
    } else {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .unwrap_or_else(|| PathBuf::from("agentenv"));
        crate::hook::integration(shell, &exe)
    };
    super::write_stdout_status(text.as_bytes())
}

/// `--require-trust` / `AGENTENV_REQUIRE_TRUST=1` for `env`, `exec`,
/// `explain`: when the scope's project store is not allowed (or changed),
/// warn and walk the other stores only (as `-g`).
pub fn gate(require: bool, opts: &mut crate::session::Options, base: &crate::core::Env) {
    let env_says =
        crate::core::get(base, "AGENTENV_REQUIRE_TRUST").is_some_and(|v| !v.is_empty() && v != "0");
    if !(require || env_says) || opts.global {
        return;
    }
    let cwd = match &opts.cwd {
        Some(c) => c.clone(),
        None => match std::env::current_dir() {
            Ok(c) => c,
            Err(_) => return,
        },
    };
    let input = crate::session::scope::ScopeInput {
        global: false,
        agents_dir: opts.agents_dir.clone(),
        project_root: opts.project_root.clone(),
    };
    let mut warnings = Vec::new();
    let resolved = crate::session::scope::Scope::resolve(&input, base, &cwd, &mut warnings);
    for w in &warnings {
        crate::warn!("{w}");
    }
    let Ok(scope) = resolved else {
        return;
    };
    if scope.level != "project" {
        return; // the project store is the user store (collapse rule)
    }
    let store = scope.agents_root.clone();
    if !store.is_dir() {
        return; // nothing to run; the walk is the reference's
    }
    let state = crate::trust::state_dir(base).and_then(|s| crate::trust::state_in(&s, &store));
    let why = match state {
        Ok(crate::trust::TrustState::Allowed) => return,
        Ok(crate::trust::TrustState::Changed) => "changed since it was allowed".to_string(),
        Ok(crate::trust::TrustState::NotAllowed) => "is not allowed".to_string(),
        Err(e) => format!("is not loaded ({e})"),
    };
    crate::warn!(
        "{} {why}; run 'agentenv allow' to load it (walking the other stores only)",
        store.display()
    );
    opts.global = true;
}
