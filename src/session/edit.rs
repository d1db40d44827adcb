//! The store edits of `agentenv set` (and `import`, `mcp migrate`): which
//! store and file a command writes ([`target`]), the refusal of a link
//! inside a store, the write of one value into a store's plain file
//! ([`write_value`]: [`super::storefile`]'s edit, 0600, temp file +
//! rename), the project store's `.gitignore`, the references in a
//! store's `agentenv.toml` and the backend write ([`to_backend`]), and
//! the trust record of an allowed store kept across the edit ([`Kept`]).
//!
//! Nothing here prints and no value is in a message: what a command
//! says on the way is returned as [`Said`] lines, a refusal is an
//! [`Error`] whose `Display` is the whole message (paths, names, the OS
//! error's kind).

use super::storefile::{self, EditError};
use crate::core::Env;
use std::path::{Path, PathBuf};

/// Which store and file `set` (and `import`, `mcp migrate`) writes.
#[derive(Debug)]
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

    /// The same store's file `name`.
    pub(crate) fn file(&self, name: &str) -> Target {
        Target {
            file: self.store.join(name),
            store: self.store.clone(),
            project: self.project,
        }
    }
}

/// What an edit has to say besides its result, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Said {
    /// What it did (`cli::say`).
    Did(String),
    /// A warning.
    Warning(String),
}

/// Why an edit was refused or failed (value-free; `Display` is the
/// whole message). [`Error::is_usage`]: exit 2, else 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Error {
    /// The user store could not be found (the session's message).
    UserStore(String),
    /// The current directory could not be read (its message).
    Cwd(String),
    /// `--project DIR` is not a directory.
    NotADirectory(PathBuf),
    /// No project store at or above this directory.
    NoProject(PathBuf),
    /// `--file local.env` of the user store (usage).
    LocalOnly { file: String, store: PathBuf },
    /// `--file` names no store file (usage; the name as Python shows it).
    BadFile(String),
    /// A symbolic link inside the store, and where it points.
    Link { path: PathBuf, to: String },
    /// A store file could not be read.
    Read { file: PathBuf, kind: String },
    /// The store file's edit was refused.
    Edit {
        file: PathBuf,
        name: String,
        why: EditError,
    },
    /// The value holds a control character.
    Control(String),
    /// A write failed: the caller's wording of the path and the OS
    /// error's kind.
    Write(String),
    /// The edit was written, but the store's trust record not renewed.
    KeepAllowed {
        file: PathBuf,
        store: PathBuf,
        why: String,
    },
    /// A store's `agentenv.toml` is not UTF-8.
    NotUtf8 { cmd: &'static str, file: PathBuf },
    /// A reference could not be added to `agentenv.toml`.
    Reference {
        cmd: &'static str,
        name: String,
        file: PathBuf,
        why: String,
    },
    /// A bad `--to` or reference (usage), with the command's prefix.
    BadRef { prefix: String, why: String },
    /// `set --to op://…` (usage).
    OpUnsupported,
    /// Not a variable name (usage): the command and the name as Python
    /// shows it.
    NotAName { cmd: &'static str, name: String },
    /// A name bash itself gives a meaning (usage).
    BashSpecial(String),
    /// The backend refused the value.
    Backend {
        cmd: &'static str,
        name: String,
        reference: String,
        why: String,
    },
    /// `import`: the backend could not give this value back whole (checked
    /// for every value before any is written).
    Unfit {
        name: String,
        reference: String,
        why: String,
    },
    /// `import`: an env file is not plain assignments.
    NotPlain(PathBuf),
    /// `import`: NAME's assignment cannot be removed from its file.
    Remove {
        name: String,
        file: PathBuf,
        why: EditError,
    },
    /// `import`: NAME is assigned in two files.
    Twice {
        name: String,
        first: PathBuf,
        second: PathBuf,
    },
    /// `import NAME`: no plain assignment of NAME.
    NotAssigned { name: String, store: PathBuf },
}

impl Error {
    /// A usage error (exit 2) rather than a runtime one (exit 1).
    pub(crate) fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::LocalOnly { .. }
                | Error::BadFile(_)
                | Error::BadRef { .. }
                | Error::OpUnsupported
                | Error::NotAName { .. }
                | Error::BashSpecial(_)
        )
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::UserStore(e) => write!(f, "set: cannot find the user store: {e}"),
            Error::Cwd(m) | Error::Write(m) => f.write_str(m),
            Error::NotADirectory(d) => {
                write!(f, "set: {} is not a directory; nothing written", d.display())
            }
            Error::NoProject(cwd) => write!(
                f,
                "set: no project here: neither {} nor a directory above it (below $HOME) holds .agents; \
                 name the store: agentenv set NAME --project DIR, or --user",
                cwd.display()
            ),
            Error::LocalOnly { file, store } => write!(
                f,
                "set: --file {file} is read in project stores only; {} is the user store (use --file env)",
                store.display()
            ),
            Error::BadFile(got) => write!(
                f,
                "set: --file must be one of env, pre.env, local.env, pre.local.env (got {got})"
            ),
            Error::Link { path, to } => write!(
                f,
                "set: {} is a symbolic link (to {to}): set never writes through a link in a store \
                 (a cloned repository could point it at a tracked file or one of yours); \
                 remove the link or name another store; nothing written",
                path.display()
            ),
            Error::Read { file, kind } => {
                write!(f, "set: cannot read {}: {kind}", file.display())
            }
            Error::Edit {
                name,
                why: why @ EditError::Nul,
                ..
            } => write!(f, "set: {name}: {why}; nothing written"),
            Error::Edit { file, name, why } => write!(
                f,
                "set: cannot set {name} in {}: {why}; edit the file by hand, or choose another store file with --file",
                file.display()
            ),
            Error::Control(name) => write!(
                f,
                "set: the value typed for {name} holds a control character (an arrow key, or a pasted escape sequence?); nothing written"
            ),
            Error::KeepAllowed { file, store, why } => write!(
                f,
                "set: wrote {} but could not keep {} allowed: {why}; run agentenv allow",
                file.display(),
                store.display()
            ),
            Error::NotUtf8 { cmd, file } => {
                write!(f, "{cmd}: {} is not UTF-8; nothing written", file.display())
            }
            Error::Reference {
                cmd,
                name,
                file,
                why,
            } => write!(
                f,
                "{cmd}: cannot add {name} to {}: {why}; nothing written",
                file.display()
            ),
            Error::BadRef { prefix, why } => write!(f, "{prefix}{why}"),
            Error::OpUnsupported => f.write_str(
                "set: --to op://… is not supported (op takes values in its arguments); store it with the 1Password app, then write the reference into agentenv.toml",
            ),
            Error::NotAName { cmd: "set", name } => write!(
                f,
                "set: {name} is not a variable name ([A-Za-z_][A-Za-z0-9_]*)"
            ),
            Error::NotAName { cmd, name } => write!(f, "{cmd}: {name} is not a variable name"),
            Error::BashSpecial(name) => write!(
                f,
                "set: {name} means something to bash itself; a store's plain file cannot carry it as a secret"
            ),
            Error::Backend {
                cmd,
                name,
                reference,
                why,
            } => write!(
                f,
                "{cmd}: {name}: {reference}: {why}; {}",
                if *cmd == "set" {
                    "nothing written"
                } else {
                    "the env files are unchanged"
                }
            ),
            Error::Unfit {
                name,
                reference,
                why,
            } => write!(f, "import: {name}: {reference}: {why}; nothing written"),
            Error::NotPlain(file) => write!(
                f,
                "import: {} is not plain assignments agentenv reads without bash; move its values by hand (agentenv set NAME --to REF)",
                file.display()
            ),
            Error::Remove { name, file, why } => write!(
                f,
                "import: cannot remove {name} from {}: {why}; nothing written",
                file.display()
            ),
            Error::Twice {
                name,
                first,
                second,
            } => write!(
                f,
                "import: {name} is assigned in both {} and {}; keep one, then import; nothing written",
                first.display(),
                second.display()
            ),
            Error::NotAssigned { name, store } => write!(
                f,
                "import: {name} has no plain assignment in {}'s env files; nothing written",
                store.display()
            ),
        }
    }
}

/// A name a command may write: a shell variable name (`cmd` words the
/// error).
pub(crate) fn check_name(cmd: &'static str, name: &str) -> Result<(), Error> {
    if crate::compat::ident::is_name(name.as_bytes()) {
        Ok(())
    } else {
        Err(Error::NotAName {
            cmd,
            name: crate::render::py_repr(name),
        })
    }
}

/// A name `set` may write into a plain file: a variable name bash gives
/// no meaning of its own.
pub(crate) fn check_set_name(name: &str) -> Result<(), Error> {
    check_name("set", name)?;
    if super::bash_special(name.as_bytes()) {
        return Err(Error::BashSpecial(name.to_string()));
    }
    Ok(())
}

fn cwd() -> Result<PathBuf, Error> {
    crate::fsutil::current_dir().map_err(Error::Cwd)
}

/// The store file of `--user`, `--project DIR` (or neither: the nearest
/// project store) and `--file FILE`, over the process environment `base`.
pub(crate) fn target(
    user: bool,
    project_dir: Option<&Path>,
    file: Option<&str>,
    base: &Env,
) -> Result<Target, Error> {
    let (store, mut project) = if user {
        let s = super::user_store(base).map_err(|e| Error::UserStore(e.to_string()))?;
        (s, false)
    } else if let Some(dir) = project_dir {
        // Lexically: `--project .` names the cwd, not `cwd/.` (no `/./` in
        // the paths printed).
        let dir: PathBuf = cwd()?.join(dir).components().collect();
        if !dir.is_dir() {
            return Err(Error::NotADirectory(dir));
        }
        // DIR is the project, or its `.agents` itself (as `allow DIR`).
        let store = if dir.file_name() == Some(std::ffi::OsStr::new(".agents")) {
            dir
        } else {
            dir.join(".agents")
        };
        (store, true)
    } else {
        let cwd = cwd()?;
        let home = crate::core::get(base, "HOME").map(PathBuf::from);
        match super::trust::find_project_root(&cwd, home.as_deref()) {
            Some(root) => (root.join(".agents"), true),
            None => return Err(Error::NoProject(cwd)),
        }
    };
    if project {
        // $HOME/.agents is the user store (the collapse rule): no local.env.
        if let Ok(user) = super::user_store(base) {
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
            return Err(Error::LocalOnly {
                file: name.to_string(),
                store,
            })
        }
        other => return Err(Error::BadFile(crate::render::py_repr(other))),
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
/// secret (a tracked file, `~/.ssh/config`). The error names the link
/// and where it points. A user store whose root is a link (`$AGENTS_HOME`,
/// `~/.agents` into a dotfiles directory) is the user's own choice.
pub(crate) fn no_link_in_store(t: &Target) -> Result<(), Error> {
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
            return Err(Error::Link { path: p, to });
        }
    }
    Ok(())
}

/// A store file's current bytes (empty when it does not exist).
pub(crate) fn read_store_file(file: &Path) -> Result<Vec<u8>, Error> {
    match crate::fsutil::read_input(file, 16 << 20) {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::Read {
            file: file.to_path_buf(),
            kind: crate::fsutil::io_kind(&e),
        }),
    }
}

/// Write `bytes` to `path` ([`crate::fsutil::write_atomic`]); a failure
/// is the text `message` makes of the path and the OS error's kind;
/// `how`: the mode, and whether missing parents are made.
fn write(
    path: &Path,
    bytes: &[u8],
    (mode, create_parents): (crate::fsutil::Mode, bool),
    message: impl FnOnce(std::path::Display<'_>, String) -> String,
) -> Result<(), Error> {
    crate::fsutil::write_atomic(path, bytes, mode, create_parents)
        .map_err(|e| Error::Write(message(path.display(), crate::fsutil::io_kind(&e))))
}

/// `name=value` in `before`, or why the target's file cannot carry it.
fn assigned(t: &Target, before: &[u8], name: &str, value: &[u8]) -> Result<Vec<u8>, Error> {
    storefile::set_assignment(before, name, value).map_err(|why| Error::Edit {
        file: t.file.clone(),
        name: name.to_string(),
        why,
    })
}

/// Refuse a store file the edit cannot follow, before a value is asked
/// for.
pub(crate) fn check_editable(t: &Target, name: &str) -> Result<(), Error> {
    assigned(t, &read_store_file(&t.file)?, name, b"x").map(drop)
}

/// Write `name=value` into the target's file (0600, temp file + rename,
/// every other line kept; a project store allowed and otherwise unchanged
/// stays allowed). The value is never in a message.
pub(crate) fn write_value(
    t: &Target,
    name: &str,
    value: &[u8],
    env: &Env,
    said: &mut Vec<Said>,
) -> Result<(), Error> {
    if value.iter().any(|&b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(Error::Control(name.to_string()));
    }
    // Again: the path may have changed while the value was typed.
    no_link_in_store(t)?;
    // Trust as it is now: a store allowed and unchanged stays allowed.
    let kept = Kept::before(t, env);
    let before = read_store_file(&t.file)?;
    let mut after = assigned(t, &before, name, value)?;
    let written = write_store_file(&t.file, &after, |file, kind| {
        format!("set: cannot write {file}: {kind}; nothing written")
    });
    after.fill(0);
    written?;
    if t.project {
        ignore_in_git(t, said)?;
    }
    kept.keep(t, env, &t.file, said)
}

/// A store's trust before an edit, to keep it allowed after.
pub(crate) struct Kept {
    trust: Option<super::Edit>,
    new_store: bool,
}

impl Kept {
    /// The trust of `t`'s store now (a project store not made yet was
    /// never allowed).
    pub(crate) fn before(t: &Target, env: &Env) -> Kept {
        Kept {
            new_store: t.project && !t.store.is_dir(),
            trust: (t.project && t.store.is_dir())
                .then(|| super::before_edit(&t.store, env))
                .flatten(),
        }
    }

    /// After the edit of `file`: an allowed, unchanged store stays
    /// allowed; any other state is a warning.
    pub(crate) fn keep(
        self,
        t: &Target,
        env: &Env,
        file: &Path,
        said: &mut Vec<Said>,
    ) -> Result<(), Error> {
        use super::trust::TrustState;
        let unloaded = |state: &str| {
            Said::Warning(format!(
                "the project store {} is {state}: the shell hook and --require-trust do not load it until you run agentenv allow",
                t.store.display(),
            ))
        };
        match self.trust {
            Some(edit) if edit.before == TrustState::Allowed => {
                edit.allow_again(&t.store, env)
                    .map_err(|e| Error::KeepAllowed {
                        file: file.to_path_buf(),
                        store: t.store.clone(),
                        why: e.to_string(),
                    })?;
            }
            Some(edit) => said.push(unloaded(edit.before.as_str())),
            // A store `set` just made was never allowed: the same note.
            None if self.new_store => said.push(unloaded(TrustState::NotAllowed.as_str())),
            None => {}
        }
        Ok(())
    }
}

/// The store's `agentenv.toml` and its text with `NAME = { from = "REF" }`
/// for each pair (an existing one-line entry of NAME replaced, every
/// other line kept). `cmd` words the errors.
pub(crate) fn with_references<'a>(
    t: &Target,
    cmd: &'static str,
    refs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(PathBuf, String), Error> {
    let toml = t.store.join(super::DECLARATIONS);
    let Ok(mut text) = String::from_utf8(read_store_file(&toml)?) else {
        return Err(Error::NotUtf8 { cmd, file: toml });
    };
    for (name, reference) in refs {
        text = super::with_reference(&text, name, reference).map_err(|why| Error::Reference {
            cmd,
            name: name.to_string(),
            file: toml.clone(),
            why,
        })?;
    }
    Ok((toml, text))
}

/// `set NAME --to REF` ready for the value: REF parsed, the store's
/// `agentenv.toml` and its new text.
pub(crate) struct Reference {
    name: String,
    text: String,
    /// The store's `agentenv.toml`.
    pub(crate) toml: PathBuf,
    after: String,
}

impl Reference {
    /// Check `text` (`--to`; `op://` is refused) and make the new
    /// `agentenv.toml` of `t`'s store, before a value is asked for.
    pub(crate) fn new(t: &Target, name: &str, text: &str) -> Result<Reference, Error> {
        let r = crate::refs::Ref::parse(text).map_err(|why| Error::BadRef {
            prefix: "set: --to: ".into(),
            why,
        })?;
        if matches!(r, crate::refs::Ref::Op(_)) {
            return Err(Error::OpUnsupported);
        }
        let (toml, after) = with_references(t, "set", [(name, text)])?;
        Ok(Reference {
            name: name.to_string(),
            text: text.to_string(),
            toml,
            after,
        })
    }

    /// Store `value` in the backend, then the reference in
    /// `agentenv.toml` (an allowed, unchanged store stays allowed).
    pub(crate) fn store(
        &self,
        t: &Target,
        value: &[u8],
        env: &Env,
        cwd: &Path,
        said: &mut Vec<Said>,
    ) -> Result<(), Error> {
        let (name, text) = (&self.name, &self.text);
        to_backend(t, "set", name, text, value, env, cwd)?;
        let kept = Kept::before(t, env);
        write_declarations(&self.toml, &self.after, |file, kind| {
            format!("set: stored {name} at {text} but cannot write {file}: {kind}")
        })?;
        kept.keep(t, env, &self.toml, said)
    }
}

/// Store `value` at the reference `reference` (its provider's `write`,
/// within `AGENTENV_REF_TIMEOUT`), for the store `t`; `cmd` words the
/// error.
pub(crate) fn to_backend(
    t: &Target,
    cmd: &'static str,
    name: &str,
    reference: &str,
    value: &[u8],
    env: &Env,
    cwd: &Path,
) -> Result<(), Error> {
    let r = crate::refs::Ref::parse(reference).map_err(|why| Error::BadRef {
        prefix: format!("{cmd}: "),
        why,
    })?;
    let ctx = crate::refs::Ctx {
        env,
        store: &t.store,
        cwd,
        timeout: crate::refs::seconds(env, "AGENTENV_REF_TIMEOUT", crate::refs::DEFAULT_TIMEOUT),
    };
    crate::refs::provider(&r)
        .write(&r, value, &ctx)
        .map_err(|why| Error::Backend {
            cmd,
            name: name.to_string(),
            reference: reference.to_string(),
            why,
        })
}

/// Whether the backend of `reference` would give `value` back whole
/// (before any write: `import` checks every value first).
pub(crate) fn check_for_backend(name: &str, reference: &str, value: &[u8]) -> Result<(), Error> {
    let r = crate::refs::Ref::parse(reference).map_err(|why| Error::BadRef {
        prefix: "import: ".to_string(),
        why,
    })?;
    crate::refs::provider(&r)
        .check(value)
        .map_err(|why| Error::Unfit {
            name: name.to_string(),
            reference: reference.to_string(),
            why,
        })
}

/// Write a store's `agentenv.toml` (its mode kept, else the umask's);
/// `message` words a failure.
pub(crate) fn write_declarations(
    toml: &Path,
    text: &str,
    message: impl FnOnce(std::path::Display<'_>, String) -> String,
) -> Result<(), Error> {
    write(
        toml,
        text.as_bytes(),
        (crate::fsutil::Mode::KeepOrUmask, true),
        message,
    )
}

/// Write a store's plain file (0600); `message` words a failure.
pub(crate) fn write_store_file(
    file: &Path,
    bytes: &[u8],
    message: impl FnOnce(std::path::Display<'_>, String) -> String,
) -> Result<(), Error> {
    write(
        file,
        bytes,
        (crate::fsutil::Mode::Exactly(0o600), true),
        message,
    )
}

/// The files of a project store that only ever hold this machine's
/// secrets: never to be committed.
const LOCAL_FILES: [&str; 2] = ["local.env", "pre.local.env"];

/// Make sure git ignores the project store's local files: write or
/// extend `<store>/.gitignore` (before the trust record is renewed, so an
/// allowed store stays allowed) and say so. A store file written that git
/// would commit (`env`, `pre.env`) gets a warning instead: it is the
/// project's shared file.
fn ignore_in_git(t: &Target, said: &mut Vec<Said>) -> Result<(), Error> {
    let file_name = t.file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ignore = t.store.join(".gitignore");
    let current = match std::fs::read(&ignore) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => {
            said.push(Said::Warning(format!(
                "cannot read {} ({}); make sure git ignores {}",
                ignore.display(),
                crate::fsutil::io_kind(&e),
                t.file.display()
            )));
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
        said.push(Said::Warning(format!(
            "{} is the project's shared store file: git commits it unless it is ignored; keep secrets in local.env (the default of set)",
            t.file.display()
        )));
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
    write(
        &ignore,
        &next,
        (crate::fsutil::Mode::KeepOrUmask, false),
        |file, kind| {
            format!(
                "set: wrote {} but cannot write {file}: {kind}; make sure git ignores it",
                t.file.display()
            )
        },
    )?;
    said.push(Said::Did(format!(
        "{} {} so that git ignores {}",
        if current.is_empty() {
            "wrote"
        } else {
            "extended"
        },
        ignore.display(),
        missing.join(" and ")
    )));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names a command refuses are usage errors (exit 2), worded per
    /// command, the name as Python shows it.
    #[test]
    fn names_are_checked_as_usage_errors() {
        for bad in ["1ABC", "A-B", ""] {
            let e = check_set_name(bad).unwrap_err();
            assert!(e.is_usage(), "{bad}");
            assert_eq!(
                e.to_string(),
                format!(
                    "set: {} is not a variable name ([A-Za-z_][A-Za-z0-9_]*)",
                    crate::render::py_repr(bad)
                )
            );
            let e = check_name("import", bad).unwrap_err();
            assert!(e.is_usage());
            assert!(e.to_string().starts_with("import: "), "{e}");
        }
        let e = check_set_name("UID").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(e, Error::BashSpecial("UID".into()));
        assert_eq!(check_set_name("GH_TOKEN"), Ok(()));
        assert_eq!(check_name("import", "UID"), Ok(()));
    }

    /// `--file` is checked against the store; a runtime failure is not a
    /// usage error.
    #[test]
    fn the_file_of_a_target_is_one_of_the_store_files() {
        let d = tempfile::tempdir().unwrap();
        let mut env = Env::new();
        env.insert("AGENTS_HOME".into(), d.path().join("u").into());
        env.insert("HOME".into(), d.path().into());
        let t = target(true, None, None, &env).unwrap();
        assert_eq!(t.file, d.path().join("u/env"));
        assert!(!t.project);
        let e = target(true, None, Some("local.env"), &env).unwrap_err();
        assert!(e.is_usage());
        assert!(matches!(e, Error::LocalOnly { .. }), "{e}");
        let e = target(true, None, Some("../x"), &env).unwrap_err();
        assert_eq!(e, Error::BadFile("'../x'".into()));
        assert!(e.is_usage());
        let e = target(false, Some(&d.path().join("none")), None, &env).unwrap_err();
        assert!(!e.is_usage());
        assert!(e
            .to_string()
            .ends_with("is not a directory; nothing written"));
    }
}
