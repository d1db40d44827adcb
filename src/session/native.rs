//! Native evaluation of plain env files made only of simple assignments,
//! with results identical to sourcing them with bash.
//!
//! The reference sources every plain file in one bash process with `set -a`,
//! between two `env -0` snapshots, and reports the difference (as dotagents
//! does). For the common file that only assigns literal values, that costs a
//! bash start and two `env` starts per file. [`evaluate`] recognises a
//! deliberately small subset of bash and computes the same change set without
//! starting anything; for everything else it answers [`Outcome::Bash`] and the
//! caller runs bash exactly as before.
//!
//! # The recognised subset
//!
//! A file is evaluated natively only when it is valid UTF-8 without NUL and
//! every statement (one per line; a quoted string may span lines) is one of:
//!
//! * a blank line (spaces and tabs only) or a comment (`#` at the start of a
//!   word, up to the end of the line) — also after a statement;
//! * one or more assignments `NAME=WORD [NAME=WORD ...]`;
//! * `export` followed by one or more `NAME=WORD` or `NAME` words
//!   (a bare `NAME` exports what is already exported under `set -a`: no-op).
//!
//! `NAME` is a shell identifier that bash gives no meaning of its own
//! ([`bash_special`]). `WORD` is a concatenation of
//! * bare characters from `A-Z a-z 0-9 _ . / : , + - = @ % ^` and `#` (not
//!   at the start of the word) and CR (a CR of a CRLF line ending is part of
//!   the word in bash, so it is part of the value here too);
//! * single-quoted text (anything but `'`, newlines included);
//! * double-quoted text without `$`, a backtick or a backslash.
//!
//! Refused (→ bash): any other character outside quotes (`$ ` \ ~ * ? [ ]
//! { } ( ) < > | & ; !`, whitespace other than space/tab, non-ASCII), a
//! line that holds only a CR, a word that is not an assignment (a command),
//! `export` alone or with options, quoted names, and environments in which
//! bash would not start clean: any variable named `BASH*`, `SHELLOPTS`,
//! `POSIXLY_CORRECT` or `ENV` (startup files, imported options, exported
//! functions that could shadow `export` or `env`).
//!
//! # The snapshot's `env`
//!
//! The reference's second snapshot runs `env` looked up on the child's
//! PATH, so the file's change set is only reported when that lookup finds a
//! working `env`. The file cannot touch PATH (it is a bash-special name), so
//! the lookup is the same for both snapshots: this module walks the
//! accumulated PATH like bash does. The first hit must be the system's
//! `/usr/bin/env` (or `/bin/env`) — any other program called `env` (a
//! store's `bin/env`, say) → bash. No hit in a PATH made only of absolute
//! directories → [`Outcome::Failed`] (bash fails the file the same way);
//! anything unclear (no PATH, an empty or relative entry before a hit, an
//! unreadable directory) → bash.

use crate::core::{ChangeSet, Env};
use indexmap::IndexMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What the native evaluator decided for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// The file is in the recognised subset; these are exactly the changes
    /// bash would report.
    Applied(ChangeSet),
    /// The file is in the recognised subset and bash would fail it.
    Failed,
    /// Not in the subset: run bash.
    Bash,
}

/// Evaluate `text` (a plain env file) against `env`, the environment the
/// bash child would start with (the accumulated env; the Windows/TMP
/// bootstrap names the reference back-fills are refused, so passing the
/// accumulated env without them is fine too).
///
/// Call it only where the reference would run bash at all (a bash was
/// found on the real PATH): without bash the reference skips plain files.
/// It walks PATH afresh; a run of files shares a `PathMemo` through
/// `evaluate_with`.
pub fn evaluate(text: &[u8], env: &Env) -> Outcome {
    evaluate_with(text, env, &mut PathMemo::new())
}

/// [`evaluate`], answering the PATH lookup from `memo` when it holds the
/// same PATH.
pub fn evaluate_with(text: &[u8], env: &Env, memo: &mut PathMemo) -> Outcome {
    evaluate_held(text, env, memo, &mut Vec::new())
}

/// [`evaluate_with`], also naming in `held` each variable the file sets to
/// the value `env` already holds (bash reports no change for it).
pub fn evaluate_held(
    text: &[u8],
    env: &Env,
    memo: &mut PathMemo,
    held: &mut Vec<OsString>,
) -> Outcome {
    if env_is_unclean(env) {
        return Outcome::Bash;
    }
    let statements = match parse(text) {
        Some(s) => s,
        None => return Outcome::Bash,
    };
    let mut finals: IndexMap<&[u8], (Vec<u8>, u32)> = IndexMap::new();
    for st in &statements {
        for item in &st.items {
            let name = match item {
                Item::Assign(n, _) | Item::ExportName(n) => *n,
            };
            if bash_special(name) {
                return Outcome::Bash;
            }
            if let Item::Assign(n, v) = item {
                finals.insert(n, (v.clone(), st.line));
            }
        }
    }
    match memo.lookup(env) {
        Lookup::Found => {}
        Lookup::NotFound => return Outcome::Failed,
        Lookup::Unsure => return Outcome::Bash,
    }
    let mut cs = ChangeSet::new();
    for (name, (value, line)) in finals {
        let k = OsStr::from_bytes(name);
        if env.get(k).map(|v| v.as_bytes()) == Some(value.as_slice()) {
            held.push(k.to_os_string());
            continue;
        }
        cs.set_at(k.to_os_string(), OsString::from_vec(value), line);
    }
    Outcome::Applied(cs)
}

/// Variables in the starting environment that change how bash starts or
/// what `export`/`env` mean.
fn env_is_unclean(env: &Env) -> bool {
    env.keys().any(|k| {
        let b = k.as_bytes();
        b.starts_with(b"BASH") || b == b"SHELLOPTS" || b == b"POSIXLY_CORRECT" || b == b"ENV"
    })
}

/// Names bash gives a meaning of its own (or sets at startup), names the
/// reference's diff ignores, names the reference back-fills into the child
/// env, and names that change how bash or the `env` program run. Assigning
/// or exporting any of them → bash.
pub fn bash_special(name: &[u8]) -> bool {
    const EXACT: &[&str] = &[
        "_",
        "CDPATH",
        "CHILD_MAX",
        "COLUMNS",
        "COMPREPLY",
        "COPROC",
        "DIRSTACK",
        "EMACS",
        "ENV",
        "EPOCHREALTIME",
        "EPOCHSECONDS",
        "EUID",
        "EXECIGNORE",
        "FCEDIT",
        "FIGNORE",
        "FUNCNAME",
        "FUNCNEST",
        "GLOBIGNORE",
        "GLOBSORT",
        "GROUPS",
        "HOME",
        "HOSTFILE",
        "HOSTNAME",
        "HOSTTYPE",
        "IFS",
        "IGNOREEOF",
        "INPUTRC",
        "INSIDE_EMACS",
        "LANG",
        "LANGUAGE",
        "LINENO",
        "LINES",
        "MACHTYPE",
        "MAIL",
        "MAILCHECK",
        "MAILPATH",
        "MAPFILE",
        "OLDPWD",
        "OPTARG",
        "OPTERR",
        "OPTIND",
        "OSTYPE",
        "PATH",
        "PIPESTATUS",
        "POSIXLY_CORRECT",
        "PPID",
        "PROMPT_COMMAND",
        "PROMPT_DIRTRIM",
        "PS0",
        "PS1",
        "PS2",
        "PS3",
        "PS4",
        "PWD",
        "RANDOM",
        "REPLY",
        "SECONDS",
        "SHELL",
        "SHELLOPTS",
        "SHLVL",
        "SRANDOM",
        "TERM",
        "TIMEFORMAT",
        "TMOUT",
        "TMPDIR",
        "UID",
        "histchars",
        // read by the dynamic loader / libc of the snapshot's `env`
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "HOSTALIASES",
        "LOCPATH",
        "NLSPATH",
        "RES_OPTIONS",
        "TZ",
        "TZDIR",
    ];
    const PREFIXES: &[&str] = &[
        "BASH",
        "COMP_",
        "HIST",
        "LC_",
        "LD_",
        "MALLOC_",
        "MSYSTEM",
        "MINGW_",
        "MSYS2_",
        "READLINE_",
    ];
    EXACT.iter().any(|e| e.as_bytes() == name)
        // back-filled into the child env by the reference
        || super::BOOTSTRAP.iter().any(|e| e.as_bytes() == name)
        || PREFIXES.iter().any(|p| name.starts_with(p.as_bytes()))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    Found,
    NotFound,
    Unsure,
}

/// The last `env` lookup on PATH (the PATH value and its answer), kept by
/// whoever evaluates a run of files: the session's assembly keeps one per
/// run. Consecutive plain files share one PATH (the bins are prepended
/// before the first file), so without it every file would re-stat every bin
/// dir. A child that ran in between (an `env.py`, bash) might have created
/// an `env` somewhere: the owner [`clear`](PathMemo::clear)s it then.
#[derive(Debug, Clone, Default)]
pub struct PathMemo {
    last: Option<(Vec<u8>, Lookup)>,
}

impl PathMemo {
    pub fn new() -> Self {
        Self::default()
    }

    /// Forget the last lookup (a child ran: the file system may differ).
    pub fn clear(&mut self) {
        self.last = None;
    }

    /// Walk `PATH` of `env` for `env` as bash's command search does, or
    /// answer from the last walk of the same PATH.
    fn lookup(&mut self, env: &Env) -> Lookup {
        let path = match env.get(OsStr::new("PATH")) {
            Some(p) => p.as_bytes(),
            None => return Lookup::Unsure,
        };
        if let Some((p, r)) = &self.last {
            if p.as_slice() == path {
                return *r;
            }
        }
        let r = walk_path(path);
        self.last = Some((path.to_vec(), r));
        r
    }
}

fn walk_path(path: &[u8]) -> Lookup {
    for dir in path.split(|&b| b == b':') {
        if dir.first() != Some(&b'/') {
            return Lookup::Unsure;
        }
        let cand = Path::new(OsStr::from_bytes(dir)).join("env");
        match std::fs::metadata(&cand) {
            Ok(md) => {
                if md.is_dir() {
                    continue; // bash skips a directory named env
                }
                if !md.is_file() || md.mode() & 0o111 != 0o111 {
                    return Lookup::Unsure;
                }
                return if is_system_env(&md) {
                    Lookup::Found
                } else {
                    Lookup::Unsure
                };
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) if e.raw_os_error() == Some(20) => continue, // ENOTDIR
            Err(_) => return Lookup::Unsure,
        }
    }
    Lookup::NotFound
}

fn is_system_env(md: &std::fs::Metadata) -> bool {
    ["/usr/bin/env", "/bin/env"]
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|s| s.dev() == md.dev() && s.ino() == md.ino()))
}

/// One statement of the subset.
struct Statement<'a> {
    line: u32,
    items: Vec<Item<'a>>,
}

enum Item<'a> {
    Assign(&'a [u8], Vec<u8>),
    ExportName(&'a [u8]),
}

/// A lexed word: its value and how many of its leading bytes came from
/// unquoted text.
struct Word<'a> {
    raw_start: &'a [u8],
    value: Vec<u8>,
    unquoted_prefix: usize,
}

use crate::compat::ident;

fn bare_ok(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'_' | b'.'
                | b'/'
                | b':'
                | b','
                | b'+'
                | b'-'
                | b'='
                | b'@'
                | b'%'
                | b'^'
                | b'#'
                | b'\r'
        )
}

/// Parse `text` into statements of the subset, or `None` when anything is
/// outside it.
fn parse(text: &[u8]) -> Option<Vec<Statement<'_>>> {
    if text.contains(&0) || std::str::from_utf8(text).is_err() {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 0usize;
    let mut line: u32 = 1;
    let n = text.len();
    while i < n {
        // One statement: words until an unquoted newline or end.
        let start_line = line;
        let mut words: Vec<Word<'_>> = Vec::new();
        loop {
            while i < n && (text[i] == b' ' || text[i] == b'\t') {
                i += 1;
            }
            if i >= n {
                break;
            }
            let c = text[i];
            if c == b'\n' {
                i += 1;
                line += 1;
                break;
            }
            if c == b'#' {
                while i < n && text[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            // A word.
            let ws = i;
            let mut value = Vec::new();
            let mut unquoted_prefix: Option<usize> = None;
            while i < n {
                let c = text[i];
                match c {
                    b' ' | b'\t' | b'\n' => break,
                    b'\'' => {
                        unquoted_prefix.get_or_insert(value.len());
                        let close = text[i + 1..].iter().position(|&b| b == b'\'')?;
                        let body = &text[i + 1..i + 1 + close];
                        line += body.iter().filter(|&&b| b == b'\n').count() as u32;
                        value.extend_from_slice(body);
                        i += close + 2;
                    }
                    b'"' => {
                        unquoted_prefix.get_or_insert(value.len());
                        let close = text[i + 1..].iter().position(|&b| b == b'"')?;
                        let body = &text[i + 1..i + 1 + close];
                        if body.iter().any(|&b| matches!(b, b'$' | b'`' | b'\\')) {
                            return None;
                        }
                        line += body.iter().filter(|&&b| b == b'\n').count() as u32;
                        value.extend_from_slice(body);
                        i += close + 2;
                    }
                    c if bare_ok(c) => {
                        value.push(c);
                        i += 1;
                    }
                    _ => return None,
                }
            }
            let unquoted_prefix = unquoted_prefix.unwrap_or(value.len());
            words.push(Word {
                raw_start: &text[ws..i],
                value,
                unquoted_prefix,
            });
        }
        if words.is_empty() {
            continue;
        }
        out.push(Statement {
            line: start_line,
            items: classify(words)?,
        });
    }
    Some(out)
}

/// An assignment word: `NAME=` in its unquoted prefix.
fn as_assignment<'a>(w: &Word<'a>) -> Option<(&'a [u8], Vec<u8>)> {
    let eq = w.value[..w.unquoted_prefix]
        .iter()
        .position(|&b| b == b'=')?;
    let name = &w.raw_start[..eq];
    if !ident::is_name(name) {
        return None;
    }
    Some((name, w.value[eq + 1..].to_vec()))
}

fn classify(words: Vec<Word<'_>>) -> Option<Vec<Item<'_>>> {
    let first = &words[0];
    let is_export = first.unquoted_prefix == first.value.len() && first.value == b"export";
    let mut items = Vec::new();
    if is_export {
        if words.len() == 1 {
            return None;
        }
        for w in &words[1..] {
            if let Some((n, v)) = as_assignment(w) {
                items.push(Item::Assign(n, v));
            } else if w.unquoted_prefix == w.value.len() && ident::is_name(&w.value) {
                items.push(Item::ExportName(w.raw_start));
            } else {
                return None;
            }
        }
    } else {
        for w in &words {
            let (n, v) = as_assignment(w)?;
            items.push(Item::Assign(n, v));
        }
    }
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Env {
        let mut e = Env::new();
        e.insert("PATH".into(), "/usr/bin:/bin".into());
        e.insert("KEEP".into(), "same".into());
        e
    }

    fn applied(text: &str) -> ChangeSet {
        match evaluate(text.as_bytes(), &base()) {
            Outcome::Applied(c) => c,
            other => panic!("{text:?}: {other:?}"),
        }
    }

    fn bash(text: &str) {
        assert_eq!(
            evaluate(text.as_bytes(), &base()),
            Outcome::Bash,
            "{text:?}"
        );
    }

    #[test]
    fn simple_forms() {
        let c = applied("# c\n\nA=1\nexport B='x y'\nC=\"q r\" # t\nD=a'b'\"c\"d\nE=\n");
        assert_eq!(c.get("A").unwrap(), "1");
        assert_eq!(c.get("B").unwrap(), "x y");
        assert_eq!(c.get("C").unwrap(), "q r");
        assert_eq!(c.get("D").unwrap(), "abcd");
        assert_eq!(c.get("E").unwrap(), "");
        assert_eq!(c.line_of(OsStr::new("C")), Some(5));
    }

    #[test]
    fn same_value_is_no_change_and_last_wins() {
        let c = applied("KEEP=same\nX=1\nX=2\n");
        assert!(c.get("KEEP").is_none());
        assert_eq!(c.get("X").unwrap(), "2");
        assert_eq!(c.line_of(OsStr::new("X")), Some(3));
        let c = applied("KEEP=other\nKEEP=same\n");
        assert!(c.is_empty());
    }

    #[test]
    fn multiline_quotes_count_lines() {
        let c = applied("A='x\ny'\nB=2\n");
        assert_eq!(c.get("A").unwrap(), "x\ny");
        assert_eq!(c.line_of(OsStr::new("B")), Some(3));
    }

    #[test]
    fn crlf_is_part_of_the_value() {
        let c = applied("A=1\r\nB='x'\r\n");
        assert_eq!(c.get("A").unwrap(), "1\r");
        assert_eq!(c.get("B").unwrap(), "x\r");
        bash("A=1\r\n\r\nB=2\r\n");
    }

    #[test]
    fn export_forms() {
        let c = applied("export A=1 B=2 KEEP\nC=3 D=4\n");
        assert_eq!(c.assigned().len(), 4);
        bash("export\n");
        bash("export -n A\n");
        bash("A=1 cmd\n");
        bash("'A'=1\n");
        bash("\"export\" A=1\n");
    }

    #[test]
    fn refused_constructs() {
        for t in [
            "A=$B\n",
            "A=~\n",
            "A=x:~/y\n",
            "A=*\n",
            "A={a,b}\n",
            "A=\"$x\"\n",
            "A=\"a\\b\"\n",
            "A=`x`\n",
            "A=1; B=2\n",
            "A=1 \\\n",
            "A='unterminated\n",
            "A=é\n",
            "PATH=/x\n",
            "HOME=/x\n",
            "BASH_ENV=/x\n",
            "LC_ALL=C\n",
            "export TERM\n",
            "echo hi\n",
            "A=(1 2)\n",
        ] {
            bash(t);
        }
        assert_eq!(evaluate(b"A=\xff\n", &base()), Outcome::Bash);
        assert_eq!(evaluate(b"A=1\0\n", &base()), Outcome::Bash);
    }

    #[test]
    fn hash_inside_word_is_literal() {
        let c = applied("A=a#b\nB=#x\n");
        assert_eq!(c.get("A").unwrap(), "a#b");
        assert_eq!(c.get("B").unwrap(), "#x");
    }

    #[test]
    fn env_lookup_decides() {
        let mut e = base();
        e.insert("PATH".into(), "/nonexistent-dir".into());
        assert_eq!(evaluate(b"A=1\n", &e), Outcome::Failed);
        e.insert("PATH".into(), "rel:/usr/bin".into());
        assert_eq!(evaluate(b"A=1\n", &e), Outcome::Bash);
        e.remove(OsStr::new("PATH"));
        assert_eq!(evaluate(b"A=1\n", &e), Outcome::Bash);
        let mut e = base();
        e.insert("BASH_FUNC_env%%".into(), "() { :; }".into());
        assert_eq!(evaluate(b"A=1\n", &e), Outcome::Bash);
    }

    #[test]
    fn the_memo_answers_for_the_same_path_until_cleared() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let mut e = base();
        e.insert(
            "PATH".into(),
            format!("{}:/usr/bin", d.path().display()).into(),
        );
        let mut memo = PathMemo::new();
        assert!(matches!(
            evaluate_with(b"A=1\n", &e, &mut memo),
            Outcome::Applied(_)
        ));
        // A layer (a child process) drops an `env` program into a bin dir.
        let p = d.path().join("env");
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Until its owner clears it, the memo still answers the old walk...
        assert!(matches!(
            evaluate_with(b"A=1\n", &e, &mut memo),
            Outcome::Applied(_)
        ));
        // ...which is why the assembly clears it after every child.
        memo.clear();
        assert_eq!(evaluate_with(b"A=1\n", &e, &mut memo), Outcome::Bash);
        // A fresh evaluation never uses a memo.
        assert_eq!(evaluate(b"A=1\n", &e), Outcome::Bash);
    }

    #[test]
    fn foreign_env_program_goes_to_bash() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("env");
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut e = base();
        e.insert(
            "PATH".into(),
            format!("{}:/usr/bin", d.path().display()).into(),
        );
        assert_eq!(evaluate(b"A=1\n", &e), Outcome::Bash);
    }
}
