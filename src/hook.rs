//! The shell hook (docs/shells.md#the-shell-hook-and-trust): `agentenv hook
//! bash|zsh|fish` prints the integration; at a prompt where the directory or a
//! watched file changed, the integration undoes the last load and runs
//! `agentenv hook SHELL
//! --load`, whose output (see [`load`]) it evaluates.
//!
//! The fast path (nothing changed) is shell builtins only: `$PWD` against
//! the directory of the last load, then `[[ f -nt stamp ]]` (fish: the
//! builtin `test f -nt stamp`) for every watched path against a stamp file
//! the last load left. Undo is a shell *function* the load defines
//! (functions are never exported unless the user asks, so no child sees a
//! previous value): it restores each variable the load set or removed, and
//! for `*PATH` variables it removes only the entries the load put in front
//! when the user changed the variable since.

use crate::core::Env;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The shells the hook supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    pub fn parse(s: &str) -> Option<Shell> {
        match s {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
        }
    }
}

/// Quote `v` as one word: bash/zsh single quotes (any bytes), fish single
/// quotes with `\\` and `\'`, bytes that are not UTF-8 as `\xHH` outside
/// the quotes.
pub fn quote(shell: Shell, v: &[u8]) -> String {
    match shell {
        Shell::Bash | Shell::Zsh => crate::compat::sh::bash_bytes_quote(v),
        Shell::Fish => {
            let mut s = String::new();
            let mut open = false;
            for chunk in v.utf8_chunks() {
                let valid = chunk.valid();
                if !valid.is_empty() {
                    if !open {
                        s.push('\'');
                        open = true;
                    }
                    for ch in valid.chars() {
                        match ch {
                            '\\' => s.push_str("\\\\"),
                            '\'' => s.push_str("\\'"),
                            c => s.push(c),
                        }
                    }
                }
                if !chunk.invalid().is_empty() {
                    if open {
                        s.push('\'');
                        open = false;
                    }
                    for b in chunk.invalid() {
                        s.push_str(&format!("\\x{b:02x}"));
                    }
                }
            }
            if open {
                s.push('\'');
            }
            if s.is_empty() {
                s.push_str("''");
            }
            s
        }
    }
}

fn q(shell: Shell, p: &OsStr) -> String {
    quote(shell, p.as_bytes())
}

/// A name the shells can hold as a variable.
use crate::compat::ident;

/// Variables the hook never sets (the shells own them).
const SHELL_OWNED: &[&str] = &["PWD", "OLDPWD", "SHLVL", "_"];

/// Names a shell keeps for itself: read-only (setting one aborts zsh's
/// `eval`, so the undo after it was never defined), or special in a way
/// that makes the undo inexact (unsetting `path` in zsh empties `PATH`,
/// erasing `fish_pid` breaks every later reload, a prompt or `IFS` the
/// shell set unexported is not in the base env to restore). A store's
/// value for one of them is not set, with one warning naming them
/// ([`emit_env`]).
pub fn shell_reserves(shell: Shell, k: &[u8]) -> bool {
    #[rustfmt::skip]
    const BASH_NAMES: &[&str] = &[
        "BASHOPTS", "SHELLOPTS", "BASH_VERSINFO", "BASH_VERSION", "BASHPID", "BASH_ARGC",
        "BASH_ARGV", "BASH_LINENO", "BASH_SOURCE", "BASH_REMATCH", "BASH_SUBSHELL",
        "BASH_COMMAND", "BASH_ARGV0", "EUID", "UID", "PPID", "GROUPS", "FUNCNAME", "DIRSTACK",
        "PIPESTATUS", "HISTCMD", "LINENO", "RANDOM", "SRANDOM", "SECONDS", "EPOCHSECONDS",
        "EPOCHREALTIME", "IFS", "PS1", "PS2", "PS4", "PROMPT_COMMAND",
    ];
    #[rustfmt::skip]
    const ZSH_NAMES: &[&str] = &[
        // Read-only.
        "ARGC", "HISTCMD", "LINENO", "PPID", "TTYIDLE", "ZSH_EVAL_CONTEXT", "ZSH_SUBSHELL",
        "status", "pipestatus", "argv", "funcfiletrace", "funcsourcetrace", "funcstack",
        "functrace", "zsh_eval_context", "zsh_scheduled_events", "historywords", "keymaps",
        "patchars", "reswords", "dis_patchars", "dis_reswords",
        // Special: integers and values the shell computes or owns.
        "EGID", "EUID", "GID", "UID", "USERNAME", "ERRNO", "RANDOM", "SECONDS", "EPOCHSECONDS",
        "EPOCHREALTIME", "ZSH_ARGZERO", "ZSH_NAME", "ZSH_VERSION", "ZSH_PATCHLEVEL", "FUNCNEST",
        "HISTSIZE", "SAVEHIST", "HISTCHARS", "IFS", "KEYBOARD_HACK", "NULLCMD", "READNULLCMD",
        "OPTARG", "OPTIND", "PROMPT", "PROMPT2", "PROMPT3", "PROMPT4", "PS1", "PS2", "PS3",
        "PS4", "RPROMPT", "RPROMPT2", "RPS1", "RPS2", "SPROMPT", "WORDCHARS", "WATCH",
        "TRY_BLOCK_ERROR", "TRY_BLOCK_INTERRUPT", "COLUMNS", "LINES",
        // Tied to an array the shell or the user's rc sets unexported.
        "CDPATH", "FPATH", "MAILPATH", "MODULE_PATH", "PSVAR", "FIGNORE", "path", "cdpath",
        "fpath", "manpath", "mailpath", "module_path", "psvar", "fignore", "watch", "histchars",
        "prompt", "signals", "epochtime", "errnos", "sysparams", "mapfile", "aliases",
        "builtins", "commands", "dirstack", "functions", "functions_source", "galiases",
        "history", "jobdirs", "jobstates", "jobtexts", "modules", "nameddirs", "options",
        "parameters", "saliases", "termcap", "terminfo", "userdirs", "usergroups", "widgets",
        "dis_aliases", "dis_builtins", "dis_functions", "dis_functions_source", "dis_galiases",
        "dis_saliases",
    ];
    #[rustfmt::skip]
    const FISH_NAMES: &[&str] = &[
        "status", "pipestatus", "version", "FISH_VERSION", "fish_pid", "hostname", "history",
        "umask", "fish_kill_signal", "status_generation", "fish_killring", "last_pid",
        "CMD_DURATION", "argv", "COLUMNS", "LINES",
    ];
    let Ok(k) = std::str::from_utf8(k) else {
        return false;
    };
    match shell {
        Shell::Bash => BASH_NAMES.contains(&k),
        Shell::Zsh => ZSH_NAMES.contains(&k),
        // fish_* and __fish* configure fish itself (fish_function_path,
        // fish_user_paths, …), set unexported by fish or the user.
        Shell::Fish => FISH_NAMES.contains(&k) || k.starts_with("fish_") || k.starts_with("__fish"),
    }
}

/// `*PATH` variables are undone entry-wise.
pub fn is_path_like(k: &[u8]) -> bool {
    k.ends_with(b"PATH")
}

/// The integration script for `shell`; `exe` is the agentenv binary the
/// hook runs (its absolute path, so a project's `bin/` on `PATH` cannot
/// put another `agentenv` in its place).
pub fn integration(shell: Shell, exe: &Path) -> String {
    let bin = q(shell, exe.as_os_str());
    match shell {
        Shell::Bash => with_shared(BASH, "bash", "${!_n-}").replace("@BIN@", &bin),
        Shell::Zsh => with_shared(ZSH, "zsh", "${(P)_n-}").replace("@BIN@", &bin),
        Shell::Fish => FISH.replace("@BIN@", &bin),
    }
}

/// The hook scripts, one file per shell (`@BIN@`: agentenv's path, quoted
/// for that shell). bash and zsh share the prompt function and
/// `_agentenv_unprepend` (`@PROMPT@`; `@GET@`: how the shell reads a
/// variable by its name) and the end of the reload (`@LOAD@`; `@SHELL@`).
const BASH: &str = include_str!("hook/hook.bash");
const ZSH: &str = include_str!("hook/hook.zsh");
const FISH: &str = include_str!("hook/hook.fish");
const PROMPT: &str = include_str!("hook/prompt.sh");
const LOAD: &str = include_str!("hook/load.sh");

/// A bash or zsh script with the shared parts filled in.
fn with_shared(script: &str, shell: &str, get: &str) -> String {
    let prompt = PROMPT.replace("@GET@", get);
    let load = LOAD.replace("@SHELL@", shell);
    script
        .replace("@PROMPT@\n", &prompt)
        .replace("@LOAD@\n", &load)
}

/// What a load needs to know.
#[derive(Debug, Clone)]
pub struct LoadInput {
    pub shell: Shell,
    /// The shell's pid (names its stamp file).
    pub pid: u32,
    /// The project root the last warning was printed for ("" for none).
    pub warned: OsString,
    /// What the last load changed against the shell's own variables, names
    /// only (`+A ~B -C`, see [`summary`]); `None` (an integration from an
    /// older agentenv): no load line.
    pub shown: Option<String>,
}

/// Names only: `+NAME` a load sets that the shell did not have, `~NAME`
/// one it changes, `-NAME` one it removes; sorted by name.
fn summary(entries: &mut [(String, char)]) -> String {
    entries.sort();
    entries
        .iter()
        .map(|(k, c)| format!("{c}{k}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn parse_summary(s: &str) -> std::collections::BTreeMap<&str, char> {
    s.split_whitespace()
        .filter_map(|t| {
            let c = t.chars().next()?;
            matches!(c, '+' | '~' | '-').then(|| (&t[1..], c))
        })
        .collect()
}

/// The load line: how the shell's variables change from the last load's
/// (`old`, against the shell's own) to this one's (`new`), names only,
/// sorted; `None` when no name changes. `+`/`~` mean set, `-` unset; a
/// name only in `old` goes back to the shell's own (set unless it was `+`).
pub fn load_line(old: &str, new: &str) -> Option<String> {
    let (old, new) = (parse_summary(old), parse_summary(new));
    let set = |c: char| c != '-';
    let mut out = Vec::new();
    for k in old
        .keys()
        .chain(new.keys().filter(|k| !old.contains_key(*k)))
    {
        let sign = match (old.get(k), new.get(k)) {
            (None, Some(&n)) => Some(n),
            (Some(&o), None) => Some(match o {
                '+' => '-',
                '-' => '+',
                _ => '~',
            }),
            (Some(&o), Some(&n)) if o != n => Some(match (set(o), set(n)) {
                (true, false) => '-',
                (false, true) => '+',
                _ => '~',
            }),
            _ => None,
        };
        if let Some(c) = sign {
            out.push((k.to_string(), c));
        }
    }
    (!out.is_empty()).then(|| summary(&mut out))
}

/// Print the load line on stderr unless `AGENTENV_HOOK_QUIET` is set to
/// something other than `0`/empty, or `-q`.
fn say_load_line(input: &LoadInput, base: &Env, new: &str) {
    let Some(old) = input.shown.as_deref() else {
        return;
    };
    let quiet =
        crate::core::get(base, "AGENTENV_HOOK_QUIET").is_some_and(|v| !v.is_empty() && v != "0");
    if quiet || crate::log::level() <= -2 {
        return;
    }
    if let Some(line) = load_line(old, new) {
        eprintln!("agentenv: {line}");
    }
}

/// The stamp file of shell `pid` under the trust state dir.
pub fn stamp_path(state: &Path, pid: u32) -> PathBuf {
    state.join("stamps").join(pid.to_string())
}

/// Leave a stamp whose mtime is a little before now (file times come from
/// a coarse clock; an edit right after the load must still count as
/// newer). Stamps of shells that are gone are removed.
///
/// Only in a state dir the trust gate would use (`trust::usable_state`:
/// owned by the effective user, not writable by group or others, not a
/// symlink), checked before anything is created in it; `stamps` is created
/// and opened with `O_NOFOLLOW | O_DIRECTORY` and must pass the same rule
/// by its handle; the stamp and the cleanup work relative to that handle.
/// The cleanup removes only what a stamp looks like: a numeric name, an
/// empty regular file of ours with one link, whose shell is gone. `None`:
/// no stamp (then only a `cd` reloads).
fn write_stamp(state: &Path, pid: u32) -> Option<PathBuf> {
    use rustix::fs::{AtFlags, Mode, OFlags};
    use std::os::unix::fs::MetadataExt;
    crate::session::trust::usable_state(state, false).ok()?;
    crate::session::trust::usable_state(state, true).ok()?;
    let me = rustix::process::geteuid().as_raw();
    let ours = |m: &std::fs::Metadata| m.is_dir() && m.uid() == me && m.mode() & 0o022 == 0;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let top = std::fs::File::from(rustix::fs::open(state, dir_flags, Mode::empty()).ok()?);
    if !ours(&top.metadata().ok()?) {
        return None;
    }
    match rustix::fs::mkdirat(&top, "stamps", Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(_) => return None,
    }
    let dir =
        std::fs::File::from(rustix::fs::openat(&top, "stamps", dir_flags, Mode::empty()).ok()?);
    if !ours(&dir.metadata().ok()?) {
        return None;
    }
    let name = pid.to_string();
    let fresh = rustix::fs::statat(&dir, name.as_str(), AtFlags::SYMLINK_NOFOLLOW).is_err();
    let f = std::fs::File::from(
        rustix::fs::openat(
            &dir,
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
        .ok()?,
    );
    let m = f.metadata().ok()?;
    if !m.is_file() || m.uid() != me {
        return None;
    }
    let t = std::time::SystemTime::now()
        .checked_sub(std::time::Duration::from_millis(20))
        .unwrap_or(std::time::SystemTime::UNIX_EPOCH);
    f.set_modified(t).ok()?;
    // A new shell: remove the stamps of shells that are gone.
    if fresh {
        if let Ok(mut rd) = rustix::fs::Dir::read_from(&dir) {
            while let Some(Ok(e)) = rd.read() {
                let n = e.file_name();
                let Some(p) = n.to_str().ok().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                if p == pid || n.to_bytes() != p.to_string().as_bytes() || crate::platform::alive(p)
                {
                    continue;
                }
                let Ok(st) = rustix::fs::statat(&dir, n, AtFlags::SYMLINK_NOFOLLOW) else {
                    continue;
                };
                let stamp_like = rustix::fs::FileType::from_raw_mode(st.st_mode as _)
                    == rustix::fs::FileType::RegularFile
                    && st.st_uid == me
                    && st.st_size == 0
                    && st.st_nlink == 1;
                if stamp_like {
                    let _ = rustix::fs::unlinkat(&dir, n, AtFlags::empty());
                }
            }
        }
    }
    Some(stamp_path(state, pid))
}

/// The directory the shell is in: `$PWD` when it names the cwd (keeps the
/// user's symlinked spelling), else the real cwd.
fn shell_cwd(base: &Env) -> Result<PathBuf, crate::session::Error> {
    let real = std::env::current_dir().map_err(|e| crate::session::Error::current_dir(&e))?;
    if let Some(pwd) = crate::core::get(base, "PWD").map(Path::new) {
        if pwd.is_absolute() {
            if let (Ok(a), Ok(b)) = (std::fs::canonicalize(pwd), std::fs::canonicalize(&real)) {
                if a == b {
                    return Ok(pwd.to_path_buf());
                }
            }
        }
    }
    Ok(real)
}

/// One load: plan the session (the walk-up root behind the trust gate,
/// the cache probe), then the shell code to evaluate — the hook's state
/// (stamp, watch list), then the env part, replayed or assembled and kept
/// (set/unset lines and the undo function). Messages go to stderr and
/// never hold a value.
pub fn load(input: &LoadInput, base: Env) -> Result<String, crate::session::Error> {
    let shell = input.shell;
    let cwd = shell_cwd(&base)?;
    let req = crate::session::Request {
        root: crate::session::RootRule::WalkUp,
        // The env part is kept in the session cache (the rules of `env
        // --cache`: owner-only, 300 s, keyed on every input).
        cache: crate::session::CacheMode::Hook {
            // hook2: the entry starts with the load line's summary.
            format: format!("hook2-{}", shell.name()),
        },
        ..crate::session::Request::new(crate::session::Options {
            cwd: Some(cwd),
            ..Default::default()
        })
    };
    let mut plan = crate::session::plan(&req, &base)?;
    let mut warned = OsString::new();
    if let Some(d) = plan.decision() {
        if let Some(w) = d.warning() {
            if input.warned.as_os_str() != d.root.as_os_str() && crate::log::level() > -2 {
                eprintln!("agentenv: {}", crate::log::escape_controls(&w, false));
            }
            warned = d.root.clone().into_os_string();
        }
    }
    crate::log::notes(&plan.take_notes());
    let state = crate::session::trust::state_dir(&base).ok();
    let stamp = state.as_ref().and_then(|s| write_stamp(s, input.pid));
    let watch = plan.watch_list(state.as_deref());
    // The hook's state first: a line of the env part that fails cannot
    // take it with it. A kept entry is the summary's line, then the env part.
    let (names, env_part) = if let Some(bytes) = plan.cached() {
        let text = String::from_utf8_lossy(bytes).into_owned();
        match text.split_once('\n') {
            Some((n, rest)) => (n.to_string(), rest.to_string()),
            None => (String::new(), text),
        }
    } else {
        let session = plan.assemble();
        crate::log::notes(session.assembly.notes());
        let mut diff = session.assembly.diff();
        if !plan.root_fixed() {
            // No project loaded: the hook leaves AGENTS_PROJECT_ROOT as the user
            // had it (the reference's `-g` would pin it to the cwd).
            diff.forget(std::ffi::OsStr::new("AGENTS_PROJECT_ROOT"));
        }
        let (names, env_part) = emit_env(shell, &base, &diff);
        plan.store(format!("{names}\n{env_part}").as_bytes());
        (names, env_part)
    };
    say_load_line(input, &base, &names);
    let tail = emit_state(shell, &watch, stamp.as_deref(), &warned, &names);
    Ok(tail + &env_part)
}

/// The variables' part of a load: set/unset lines and the undo function.
/// Depends only on the base env and the assembly (so `--cache` can keep it).
/// With it, the [`summary`] of the names it changes.
fn emit_env(shell: Shell, base: &Env, diff: &crate::core::ChangeSet) -> (String, String) {
    let mut names: Vec<(String, char)> = Vec::new();
    let mut apply = String::new();
    let mut undo = String::new();
    let mut reserved: Vec<String> = Vec::new();
    let mut usable = |k: &OsStr| {
        let ok = ident::is_name(k.as_bytes())
            && !SHELL_OWNED.iter().any(|o| OsStr::new(o) == k)
            && !k.as_bytes().starts_with(b"_agentenv")
            && !k.as_bytes().starts_with(b"__agentenv");
        if !ok {
            crate::warn!(
                "hook: skipping {}: not a variable name the shell can hold",
                crate::render::py_repr(&k.to_string_lossy())
            );
            return false;
        }
        if shell_reserves(shell, k.as_bytes()) {
            reserved.push(k.to_string_lossy().into_owned());
            return false;
        }
        true
    };
    for (k, v) in diff.assigned() {
        if !usable(k) {
            continue;
        }
        let old = base.get(k);
        if old != Some(v) {
            let c = if old.is_some() { '~' } else { '+' };
            names.push((k.to_string_lossy().into_owned(), c));
        }
        apply.push_str(&set_line(shell, k, v));
        if is_path_like(k.as_bytes()) {
            let old_entries: Vec<&[u8]> = old
                .map(|o| o.as_bytes().split(|c| *c == b':').collect())
                .unwrap_or_default();
            let added: Vec<&[u8]> = v
                .as_bytes()
                .split(|c| *c == b':')
                .filter(|e| !e.is_empty() && !old_entries.contains(e))
                .collect();
            let fname = match shell {
                Shell::Fish => "__agentenv_unprepend",
                _ => "_agentenv_unprepend",
            };
            let mut line = format!(
                "{fname} {} {} {} {}",
                k.to_string_lossy(),
                if old.is_some() { "1" } else { "0" },
                quote(shell, old.map(|o| o.as_bytes()).unwrap_or(b"")),
                quote(shell, v.as_bytes())
            );
            for e in added {
                line.push(' ');
                line.push_str(&quote(shell, e));
            }
            undo.push_str("  ");
            undo.push_str(&line);
            undo.push('\n');
        } else {
            undo.push_str("  ");
            undo.push_str(&match old {
                Some(o) => set_line(shell, k, o),
                None => unset_line(shell, k),
            });
        }
    }
    for k in diff.removed() {
        if !usable(k) {
            continue;
        }
        apply.push_str(&unset_line(shell, k));
        if base.get(k).is_some() {
            names.push((k.to_string_lossy().into_owned(), '-'));
        }
        if let Some(o) = base.get(k) {
            undo.push_str("  ");
            undo.push_str(&set_line(shell, k, o));
        }
    }
    if !reserved.is_empty() {
        crate::warn!(
            "hook: not set in {} (the shell reserves these names): {}",
            shell.name(),
            reserved.join(", ")
        );
    }
    // The undo goes first: if a line after it fails, what was set before
    // it is still undone at the next reload.
    let mut out = String::new();
    match shell {
        Shell::Bash | Shell::Zsh => {
            out.push_str("_agentenv_undo() {\n  :\n");
            out.push_str(&undo);
            out.push_str("}\n");
        }
        Shell::Fish => {
            out.push_str("function __agentenv_undo\n  true\n");
            out.push_str(&undo);
            out.push_str("end\n");
        }
    }
    out.push_str(&apply);
    (summary(&mut names), out)
}

/// The hook's own state after a load: the stamp, the watch list (empty
/// without a stamp: then only a `cd` reloads) and the root last warned for.
fn emit_state(
    shell: Shell,
    watch: &[PathBuf],
    stamp: Option<&Path>,
    warned: &OsStr,
    shown: &str,
) -> String {
    let stamp_q = q(shell, stamp.map(|s| s.as_os_str()).unwrap_or_default());
    let mut list = String::new();
    if stamp.is_some() {
        for w in watch {
            list.push(' ');
            list.push_str(&q(shell, w.as_os_str()));
        }
    }
    let warned = q(shell, warned);
    let shown = quote(shell, shown.as_bytes());
    match shell {
        Shell::Bash | Shell::Zsh => format!(
            "_agentenv_stamp={stamp_q}\n_agentenv_watch=({list} )\n_agentenv_warned={warned}\n_agentenv_shown={shown}\n"
        ),
        Shell::Fish => format!(
            "set -g __agentenv_stamp {stamp_q}\nset -g __agentenv_watch{list}\nset -g __agentenv_warned {warned}\nset -g __agentenv_shown {shown}\n"
        ),
    }
}

fn set_line(shell: Shell, k: &OsStr, v: &OsStr) -> String {
    let k = k.to_string_lossy();
    match shell {
        Shell::Bash | Shell::Zsh => format!("export {k}={}\n", q(shell, v)),
        Shell::Fish => format!("set -gx {k} {}\n", q(shell, v)),
    }
}

fn unset_line(shell: Shell, k: &OsStr) -> String {
    let k = k.to_string_lossy();
    match shell {
        Shell::Bash | Shell::Zsh => format!("unset {k}\n"),
        Shell::Fish => format!("set -eg {k}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote(Shell::Bash, b"a'b"), "'a'\\''b'");
        assert_eq!(quote(Shell::Fish, b"a'b\\c"), "'a\\'b\\\\c'");
        assert_eq!(quote(Shell::Fish, b""), "''");
        assert_eq!(quote(Shell::Fish, b"a\xffb"), "'a'\\xff'b'");
        assert_eq!(quote(Shell::Bash, b"\xff"), "$'\\xff'");
    }

    #[test]
    fn the_load_line_names_what_changes_since_the_last_load() {
        assert_eq!(load_line("", "+FOO ~PATH").as_deref(), Some("+FOO ~PATH"));
        assert_eq!(load_line("+FOO ~PATH", "+FOO ~PATH"), None);
        assert_eq!(
            load_line("+FOO ~PATH -RM", "").as_deref(),
            Some("-FOO ~PATH +RM")
        );
        assert_eq!(load_line("+A ~PATH", "+B ~PATH").as_deref(), Some("-A +B"));
        assert_eq!(load_line("~X", "-X").as_deref(), Some("-X"));
        assert_eq!(load_line("-X", "~X").as_deref(), Some("+X"));
        assert_eq!(load_line("", ""), None);
    }

    #[test]
    fn names() {
        assert!(ident::is_name(b"A_1"));
        assert!(!ident::is_name(b"1A"));
        assert!(!ident::is_name(b"A.B"));
        assert!(!ident::is_name(b""));
    }
}
