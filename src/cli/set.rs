//! `agentenv set NAME [--user | --project DIR] [--file FILE]`
//! (docs/audit-set.md#audit-and-set): a value typed at the controlling terminal, never
//! echoed, written into a store's plain file. Without a terminal it refuses:
//! an agent cannot hand a value over through its context.

use super::{Exit, Failure};
use crate::session::storefile;
use std::fs::File;
use std::path::{Path, PathBuf};

const AFTER_HELP: &str = "\
The value is read from the terminal (/dev/tty) with echo off, twice; never
from an argument, stdin or the environment. Without a terminal (an agent's
shell tool, a pipe, CI) set refuses and writes nothing. Ctrl-C cancels.

Writes NAME='value' into the store file (0600, temp file + rename): an
existing NAME=... or export NAME=... is replaced in place, every other line
kept; otherwise appended. Prints the name and the file only. A project store
that was allowed and otherwise unchanged stays allowed.";

#[derive(Debug, clap::Args)]
#[command(after_help = super::examples::after(AFTER_HELP, super::examples::SET))]
pub struct SetArgs {
    /// The variable to set (a shell variable name).
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Write into the user store's env file ($AGENTS_HOME, else ~/.agents).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Write into DIR/.agents/local.env (default: the nearest directory
    /// upwards holding .agents, below $HOME, as `allow` finds it).
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The store file to write: env, pre.env, or (project stores only)
    /// local.env, pre.local.env. Default: local.env in a project store,
    /// env in the user store.
    #[arg(long = "file", value_name = "FILE")]
    pub file: Option<String>,
    #[arg(
        long = "to",
        value_name = "REF",
        conflicts_with = "file",
        help = "Put the value at REF (vault://, age:, pass:, keychain:) and its reference in agentenv.toml"
    )]
    pub to: Option<String>,
}

/// Which store and file `set` (and `mcp migrate`) writes.
pub(crate) struct Target {
    pub(crate) store: PathBuf,
    pub(crate) file: PathBuf,
    pub(crate) project: bool,
}

impl Target {
    /// The env file of the user store at `store` (`--agents-dir DIR`).
    pub(crate) fn user_at(store: PathBuf) -> Target {
        Target {
            file: store.join("env"),
            store,
            project: false,
        }
    }
}

fn target(a: &SetArgs) -> Result<Target, Failure> {
    target_for(a.user, a.project.as_deref(), a.file.as_deref())
}

/// The store file of `--user`, `--project DIR` (or neither: the nearest
/// project store) and `--file FILE`.
pub(crate) fn target_for(
    user: bool,
    project_dir: Option<&Path>,
    file: Option<&str>,
) -> Result<Target, Failure> {
    let base = crate::core::process_env();
    let (store, mut project) = if user {
        let s = crate::session::user_store(&base)
            .map_err(|e| Failure::runtime(format!("set: cannot find the user store: {e}")))?;
        (s, false)
    } else if let Some(dir) = project_dir {
        let cwd = super::current_dir()?;
        // Lexically: `--project .` names the cwd, not `cwd/.` (no `/./` in
        // the paths printed).
        let dir: PathBuf = cwd.join(dir).components().collect();
        if !dir.is_dir() {
            return Err(Failure::runtime(format!(
                "set: {} is not a directory; nothing written",
                dir.display()
            )));
        }
        // (`components` drops the `.` of `--project .` from messages.)
        let store = super::trust::store_for(Some(&dir))?;
        (store.components().collect(), true)
    } else {
        let cwd = super::current_dir()?;
        let home = crate::core::get(&base, "HOME").map(PathBuf::from);
        match crate::session::trust::find_project_root(&cwd, home.as_deref()) {
            Some(root) => (root.join(".agents"), true),
            None => {
                return Err(Failure::runtime(format!(
                    "set: no project here: neither {} nor a directory above it (below $HOME) holds .agents; \
                     name the store: agentenv set NAME --project DIR, or --user",
                    cwd.display()
                )))
            }
        }
    };
    if project {
        // $HOME/.agents is the user store (the collapse rule): no local.env.
        if let Ok(user) = crate::session::user_store(&base) {
            let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            if canon(&user) == canon(&store) {
                project = false;
            }
        }
    }
    let name = match file {
        Some(f) => f,
        None if project => "local.env",
        None => "env",
    };
    match name {
        "env" | "pre.env" => {}
        "local.env" | "pre.local.env" if project => {}
        "local.env" | "pre.local.env" => {
            return Err(Failure::usage(format!(
                "set: --file {name} is read in project stores only; {} is the user store (use --file env)",
                store.display()
            )))
        }
        other => {
            return Err(Failure::usage(format!(
                "set: --file must be one of env, pre.env, local.env, pre.local.env (got {})",
                crate::render::py_repr(other)
            )))
        }
    }
    Ok(Target {
        file: store.join(name),
        store,
        project,
    })
}

/// Refuse a symbolic link on the path inside the store — the store file
/// itself, and a project store's `.agents` directory (a cloned repository
/// ships both): a repository must not choose which file receives a
/// secret (a tracked file, `~/.ssh/config`). The message names the link
/// and where it points. A user store whose root is a link (`$AGENTS_HOME`,
/// `~/.agents` into a dotfiles directory) is the user's own choice.
pub(crate) fn no_link_in_store(t: &Target) -> Result<(), Failure> {
    let mut inside = vec![t.file.clone()];
    if t.project {
        inside.push(t.store.clone());
    }
    for p in inside {
        let Ok(md) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if md.file_type().is_symlink() {
            let to = std::fs::read_link(&p)
                .map(|l| l.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(Failure::runtime(format!(
                "set: {} is a symbolic link (to {to}): set never writes through a link in a store \
                 (a cloned repository could point it at a tracked file or one of yours); \
                 remove the link or name another store; nothing written",
                p.display()
            )));
        }
    }
    Ok(())
}

/// The store file's current bytes (empty when it does not exist).
pub(crate) fn read_store_file(file: &Path) -> Result<Vec<u8>, Failure> {
    match crate::fsutil::read_input(file, 16 << 20) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Failure::runtime(format!(
            "set: cannot read {}: {}",
            file.display(),
            crate::fsutil::io_kind(&e)
        ))),
    }
}

fn edit_failure(file: &Path, name: &str, e: storefile::EditError) -> Failure {
    match e {
        storefile::EditError::Nul => Failure::runtime(format!("set: {name}: {e}; nothing written")),
        e => Failure::runtime(format!(
            "set: cannot set {name} in {}: {e}; edit the file by hand, or choose another store file with --file",
            file.display()
        )),
    }
}

pub fn run(a: SetArgs) -> Exit {
    let name = a.name.as_str();
    if !crate::compat::ident::is_name(name.as_bytes()) {
        return Err(Failure::usage(format!(
            "set: {} is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
            crate::render::py_repr(name)
        )));
    }
    if crate::session::bash_special(name.as_bytes()) {
        return Err(Failure::usage(format!(
            "set: {name} means something to bash itself; a store's plain file cannot carry it as a secret"
        )));
    }
    let t = target(&a)?;
    no_link_in_store(&t)?;
    if let Some(text) = &a.to {
        return set_reference(&t, name, text);
    }
    // Refuse a file the edit cannot follow before asking for anything.
    let before = read_store_file(&t.file)?;
    storefile::set_assignment(&before, name, b"x").map_err(|e| edit_failure(&t.file, name, e))?;

    let mut value = read_value_twice(name)?;
    let result = write_value(&t, name, &value);
    value.fill(0);
    result?;
    super::say(format_args!("set {name} in {}", t.file.display()));
    Ok(0)
}

/// Write `name=value` into the target's file (0600, temp file + rename,
/// every other line kept; a project store allowed and otherwise unchanged
/// stays allowed). The value is never in a message.
pub(crate) fn write_value(t: &Target, name: &str, value: &[u8]) -> Result<(), Failure> {
    if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(Failure::runtime(format!(
            "set: the value typed for {name} holds a control character (an arrow key, or a pasted escape sequence?); nothing written"
        )));
    }
    // Again: the path may have changed while the value was typed.
    no_link_in_store(t)?;
    // Trust as it is now: a store allowed and unchanged stays allowed.
    let env = crate::core::process_env();
    let new_store = t.project && !t.store.is_dir();
    let trust = (t.project && t.store.is_dir())
        .then(|| crate::session::before_edit(&t.store, &env))
        .flatten();
    let before = read_store_file(&t.file)?;
    let mut after = storefile::set_assignment(&before, name, value)
        .map_err(|e| edit_failure(&t.file, name, e))?;
    let written = super::write_file(
        &t.file,
        &after,
        crate::fsutil::Mode::Exactly(0o600),
        true,
        |file, kind| format!("set: cannot write {file}: {kind}; nothing written"),
    );
    after.fill(0);
    written?;
    if t.project {
        ignore_in_git(t)?;
    }
    keep_trust(t, trust, new_store, &env, &t.file)
}

/// After an edit of `t`'s store: an allowed, unchanged store stays
/// allowed; any other state is a warning.
pub(crate) fn keep_trust(
    t: &Target,
    trust: Option<crate::session::Edit>,
    new_store: bool,
    env: &crate::core::Env,
    file: &Path,
) -> Result<(), Failure> {
    match trust {
        Some(edit) if edit.before == crate::session::trust::TrustState::Allowed => {
            edit.allow_again(&t.store, env).map_err(|e| {
                Failure::runtime(format!(
                    "set: wrote {} but could not keep {} allowed: {e}; run agentenv allow",
                    file.display(),
                    t.store.display()
                ))
            })?;
        }
        Some(edit) => {
            crate::warn!(
                "the project store {} is {}: the shell hook and --require-trust do not load it until you run agentenv allow",
                t.store.display(),
                edit.before.as_str()
            );
        }
        // A store `set` just made was never allowed: the same note.
        None if new_store => {
            crate::warn!(
                "the project store {} is {}: the shell hook and --require-trust do not load it until you run agentenv allow",
                t.store.display(),
                crate::session::trust::TrustState::NotAllowed.as_str()
            );
        }
        None => {}
    }
    Ok(())
}

/// Write a store's `agentenv.toml` (its mode kept, else the umask's).
pub(crate) fn write_declarations(
    toml: &Path,
    text: &str,
    message: impl FnOnce(std::path::Display<'_>, String) -> String,
) -> Result<(), Failure> {
    super::write_file(
        toml,
        text.as_bytes(),
        crate::fsutil::Mode::KeepOrUmask,
        true,
        message,
    )
}

/// `set NAME --to REF`: the typed value into the backend at REF, then
/// `NAME = { from = "REF" }` into the store's `agentenv.toml` (an
/// existing one-line entry of NAME replaced, every other line kept).
fn set_reference(t: &Target, name: &str, text: &str) -> Exit {
    let r =
        crate::refs::Ref::parse(text).map_err(|why| Failure::usage(format!("set: --to: {why}")))?;
    if matches!(r, crate::refs::Ref::Op(_)) {
        return Err(Failure::usage(
            "set: --to op://… is not supported (op takes values in its arguments); store it with the 1Password app, then write the reference into agentenv.toml",
        ));
    }
    let toml = t.store.join(crate::session::DECLARATIONS);
    let before = read_store_file(&toml)?;
    let before = String::from_utf8(before).map_err(|_| {
        Failure::runtime(format!(
            "set: {} is not UTF-8; nothing written",
            toml.display()
        ))
    })?;
    let after = crate::session::with_reference(&before, name, text).map_err(|why| {
        Failure::runtime(format!(
            "set: cannot add {name} to {}: {why}; nothing written",
            toml.display()
        ))
    })?;
    let mut value = read_value_twice(name)?;
    let env = crate::core::process_env();
    let cwd = super::current_dir()?;
    let ctx = crate::refs::Ctx {
        env: &env,
        store: &t.store,
        cwd: &cwd,
        timeout: crate::refs::seconds(&env, "AGENTENV_REF_TIMEOUT", crate::refs::DEFAULT_TIMEOUT),
    };
    let stored = crate::refs::provider(&r).write(&r, &value, &ctx);
    value.fill(0);
    stored
        .map_err(|why| Failure::runtime(format!("set: {name}: {text}: {why}; nothing written")))?;
    let new_store = t.project && !t.store.is_dir();
    let trust = (t.project && t.store.is_dir())
        .then(|| crate::session::before_edit(&t.store, &env))
        .flatten();
    write_declarations(&toml, &after, |file, kind| {
        format!("set: stored {name} at {text} but cannot write {file}: {kind}")
    })?;
    keep_trust(t, trust, new_store, &env, &toml)?;
    super::say(format_args!(
        "set {name} at {text}, referenced in {}",
        toml.display()
    ));
    Ok(0)
}

/// The files of a project store that only ever hold this machine's
/// secrets: never to be committed.
const LOCAL_FILES: [&str; 2] = ["local.env", "pre.local.env"];

/// Make sure git ignores the project store's local files: `set` writes or
/// extends `<store>/.gitignore` (before the trust record is renewed, so an
/// allowed store stays allowed) and says so. A store file `set` writes
/// that git would commit (`env`, `pre.env`) gets a warning instead: it is
/// the project's shared file.
pub(crate) fn ignore_in_git(t: &Target) -> Result<(), Failure> {
    let file_name = t.file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ignore = t.store.join(".gitignore");
    let current = match std::fs::read(&ignore) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            crate::warn!(
                "cannot read {} ({}); make sure git ignores {}",
                ignore.display(),
                crate::fsutil::io_kind(&e),
                t.file.display()
            );
            return Ok(());
        }
    };
    let text = String::from_utf8_lossy(&current);
    let listed = |name: &str| {
        text.lines()
            .map(str::trim)
            .any(|l| l == name || l.strip_prefix('/') == Some(name))
    };
    if !LOCAL_FILES.contains(&file_name) {
        crate::warn!(
            "{} is the project's shared store file: git commits it unless it is ignored; keep secrets in local.env (the default of set)",
            t.file.display()
        );
        return Ok(());
    }
    let missing: Vec<&str> = LOCAL_FILES.iter().copied().filter(|n| !listed(n)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut next = current.clone();
    if next.is_empty() {
        next.extend_from_slice(b"# This machine's secrets (agentenv set): never committed.\n");
    } else if !next.ends_with(b"\n") {
        next.push(b'\n');
    }
    for n in &missing {
        next.extend_from_slice(format!("/{n}\n").as_bytes());
    }
    super::write_file(
        &ignore,
        &next,
        crate::fsutil::Mode::KeepOrUmask,
        false,
        |file, kind| {
            format!(
                "set: wrote {} but cannot write {file}: {kind}; make sure git ignores it",
                t.file.display()
            )
        },
    )?;
    super::say(format_args!(
        "{} {} so that git ignores {}",
        if current.is_empty() {
            "wrote"
        } else {
            "extended"
        },
        ignore.display(),
        missing.join(" and ")
    ));
    Ok(())
}

/// The controlling terminal, or the refusal every non-interactive caller
/// (an agent's shell tool, a pipe, CI) gets.
fn open_tty() -> Result<File, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let refuse = || {
        Failure::runtime(
            "set: no terminal to read the value from (the value is never taken from arguments, stdin or the environment); \
             run 'agentenv set NAME' yourself in a terminal (an agent cannot pass a value through its context); nothing written",
        )
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags((rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC).bits() as i32)
        .open("/dev/tty")
        .map_err(|_| refuse())?;
    if !rustix::termios::isatty(&f) {
        return Err(refuse());
    }
    Ok(f)
}

fn read_value_twice(name: &str) -> Result<Vec<u8>, Failure> {
    let tty = open_tty()?;
    let mut reader = crate::tty::TtyReader::new(&tty)?;
    reader.name = name.to_string();
    let mut first = reader.read_hidden(&format!("Value for {name}: "))?;
    let mut second = reader.read_hidden(&format!("Again, to confirm {name}: "))?;
    drop(reader);
    let same = first == second;
    second.fill(0);
    if !same {
        first.fill(0);
        return Err(Failure::runtime(format!(
            "set: the two values typed for {name} differ; nothing written"
        )));
    }
    if first.is_empty() {
        return Err(Failure::runtime(format!(
            "set: no value typed for {name}; nothing written"
        )));
    }
    Ok(first)
}

impl From<crate::tty::TtyError> for Failure {
    fn from(e: crate::tty::TtyError) -> Failure {
        Failure {
            code: e.code,
            message: e.message,
        }
    }
}
