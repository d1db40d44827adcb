//! The native plain-file evaluator against real bash.
//!
//! Thousands of generated files (a seeded xorshift over a grammar of
//! accepted constructs and near misses) are each sourced by bash with the
//! reference's exact snapshot script (dotagents 0.8.2 `_SOURCE_SCRIPT`,
//! `bash -c <script> bash <file>`) and its change set is computed the way
//! the reference computes it. Whenever `native::evaluate` answers
//! `Applied` or `Failed`, it must agree with bash exactly: the same set
//! keys and values, no removals, and the same failure state.

use crate::support;

use support::Rng;

use agentenv::core::Env;
use agentenv::internals::{evaluate, Outcome};
// The snapshot script agentenv runs; `snapshot_script_is_the_references`
// checks it against the installed reference.
use agentenv::internals::SOURCE_SCRIPT;
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Command;

/// What bash reported for one file, as the reference reads it.
#[derive(Debug, PartialEq, Eq)]
enum BashResult {
    Failed,
    Changes {
        set: BTreeMap<Vec<u8>, Vec<u8>>,
        removed: Vec<Vec<u8>>,
    },
}

fn own_var(k: &[u8]) -> bool {
    matches!(k, b"_" | b"PWD" | b"OLDPWD" | b"SHLVL")
        || k.starts_with(b"MSYSTEM")
        || k.starts_with(b"MINGW_")
        || k.starts_with(b"MSYS2_")
}

fn parse_entries(recs: &[&[u8]]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    for r in recs {
        if let Some(eq) = r.iter().position(|&b| b == b'=') {
            let (k, v) = (&r[..eq], &r[eq + 1..]);
            if !own_var(k) {
                out.insert(k.to_vec(), v.to_vec());
            }
        }
    }
    out
}

fn run_bash(bash: &Path, file: &Path, env: &Env, cwd: &Path) -> BashResult {
    let out = Command::new(bash)
        .arg("-c")
        .arg(SOURCE_SCRIPT)
        .arg("bash")
        .arg(file)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run bash");
    let recs: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
    let cut = recs.iter().position(|r| *r == b"@@dotagents:after@@");
    let cut = match (out.status.success(), cut) {
        (true, Some(c)) => c,
        _ => return BashResult::Failed,
    };
    let before = parse_entries(&recs[..cut]);
    let after = parse_entries(&recs[cut + 1..]);
    let removed = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .cloned()
        .collect();
    let set = after
        .into_iter()
        .filter(|(k, v)| before.get(k) != Some(v))
        .collect();
    BashResult::Changes { set, removed }
}

fn native_as_bash(o: &Outcome) -> Option<BashResult> {
    match o {
        Outcome::Bash => None,
        Outcome::Failed => Some(BashResult::Failed),
        Outcome::Applied(cs) => Some(BashResult::Changes {
            set: cs
                .assigned()
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect(),
            removed: cs.removed().iter().map(|k| k.as_bytes().to_vec()).collect(),
        }),
    }
}

const NAMES: &[&str] = &[
    "A", "B", "C", "FOO", "foo_bar", "_x", "X1", "KEEP", "OLD", "TOKEN", "API_KEY", "export",
];
const SPECIAL: &[&str] = &[
    "PATH", "HOME", "TERM", "SHLVL", "_", "RANDOM", "LC_ALL", "BASH_X", "IFS", "PWD", "SHELL",
    "OPTIND", "UID", "LANG", "TMPDIR", "HOSTNAME", "SECONDS", "LINENO",
];
const BARE: &[u8] = b"abcXYZ019_./:,+-=@%^#\r";
const SQ_BODY: &[u8] = b"ab $\"\\`~*?{}[]#;&|()<>!\n\t=:\r";
const DQ_BODY: &[u8] = b"ab '#;&|()<>!*?[]{}~=:\n\t";
/// Non-ASCII text inside quotes (accepted natively).
const WIDE: &[&str] = &["é", "€", "日本", "\u{2028}", "\u{a0}", "😀", "\u{85}"];
/// Constructs that look close to the subset but are not in it.
const NEAR: &[&str] = &[
    "$X",
    "${X}",
    "$(echo z)",
    "`echo z`",
    "\\",
    "~",
    "~/x",
    "*",
    "?",
    "[a]",
    "{a,b}",
    ";",
    "&&",
    "|",
    "(",
    ")",
    "<",
    ">",
    "$'a\\nb'",
    "!",
    "\"a\\\"b\"",
    "\"$A\"",
    "'",
    "\"",
    " ",
    "\t",
    "é",
    "\u{2028}",
    "\x0b",
];
const NEAR_LINES: &[&str] = &[
    "export",
    "export -n A",
    "export -p",
    "unset KEEP",
    "unset A",
    "readonly R=1",
    "declare -x D=1",
    "exit 0",
    "exit 1",
    "return 0",
    "true",
    "false",
    "echo hi",
    "A =1",
    "A= 1",
    "1A=1",
    "'A'=1",
    "\"export\" A=1",
    "A=1 B",
    "A=1; B=2",
    "A=1 && B=2",
    "f() { :; }",
    "A=(1 2)",
    "A+=x",
    "\r",
    "A=1 \\",
    "KEEP=",
    "PATH=/nonexistent",
    "unset PATH",
    "[ -n \"$NOPE\" ] && Z=1",
    ":",
    "set -u",
];

fn gen_bare(r: &mut Rng, out: &mut Vec<u8>, first: bool) {
    for i in 0..1 + r.below(6) {
        let mut c = BARE[r.below(BARE.len())];
        if c == b'#' && first && i == 0 {
            c = b'h';
        }
        out.push(c);
    }
}

fn gen_word(r: &mut Rng, out: &mut Vec<u8>, near: bool) {
    let segs = 1 + r.below(3);
    for s in 0..segs {
        match r.below(if near { 5 } else { 4 }) {
            0 | 1 => gen_bare(r, out, s == 0),
            2 => {
                out.push(b'\'');
                for _ in 0..r.below(8) {
                    if r.chance(10) {
                        out.extend_from_slice(r.pick(WIDE).as_bytes());
                    } else {
                        out.push(SQ_BODY[r.below(SQ_BODY.len())]);
                    }
                }
                out.push(b'\'');
            }
            3 => {
                out.push(b'"');
                for _ in 0..r.below(8) {
                    if r.chance(10) {
                        out.extend_from_slice(r.pick(WIDE).as_bytes());
                    } else {
                        out.push(DQ_BODY[r.below(DQ_BODY.len())]);
                    }
                }
                out.push(b'"');
            }
            _ => out.extend_from_slice(r.pick(NEAR).as_bytes()),
        }
    }
    if r.chance(3) {
        out.clear(); // empty value
    }
}

fn gen_assign(r: &mut Rng, out: &mut Vec<u8>, near: bool, env: &Env) {
    let name = if near && r.chance(15) {
        r.pick(SPECIAL)
    } else {
        r.pick(NAMES)
    };
    out.extend_from_slice(name.as_bytes());
    out.push(b'=');
    // Sometimes the exact current value.
    if let Some(v) = env.get(std::ffi::OsStr::new(name)) {
        if r.chance(40) && v.as_bytes().iter().all(|c| c.is_ascii_alphanumeric()) {
            out.extend_from_slice(v.as_bytes());
            return;
        }
    }
    let mut w = Vec::new();
    gen_word(r, &mut w, near);
    out.extend_from_slice(&w);
}

/// A line; with `crlf` and not `near`, never a blank one (a blank CRLF
/// line is a command named CR to bash).
fn gen_line(r: &mut Rng, out: &mut Vec<u8>, near: bool, crlf: bool, env: &Env) {
    if crlf && !near {
        if r.chance(20) {
            out.extend_from_slice(b" ");
        }
        gen_assign(r, out, near, env);
        return;
    }
    if r.chance(20) {
        out.extend_from_slice(r.pick(&["", " ", "\t", "  "]).as_bytes());
    }
    match r.below(if near { 8 } else { 7 }) {
        0 => {}
        1 => out.extend_from_slice(r.pick(&["# c", "#", "# $X `x` 'q", "## x=1"]).as_bytes()),
        2 | 3 => gen_assign(r, out, near, env),
        4 => {
            out.extend_from_slice(b"export ");
            gen_assign(r, out, near, env);
        }
        5 => {
            let export = r.chance(50);
            if export {
                out.extend_from_slice(b"export ");
            }
            for i in 0..2 + r.below(2) {
                if i > 0 {
                    out.extend_from_slice(r.pick(&[" ", "\t", "  "]).as_bytes());
                }
                if r.chance(25) && export {
                    out.extend_from_slice(r.pick(NAMES).as_bytes());
                } else {
                    gen_assign(r, out, near, env);
                }
            }
        }
        6 => {
            gen_assign(r, out, near, env);
            out.extend_from_slice(r.pick(&[" # trailing", "\t#x", " #", " #$(x)"]).as_bytes());
        }
        _ => out.extend_from_slice(r.pick(NEAR_LINES).as_bytes()),
    }
}

/// One generated case: the file's bytes, the env it runs in, and whether
/// it was drawn from the accepted grammar only.
struct Case {
    text: Vec<u8>,
    env: Env,
    accepted_only: bool,
}

fn gen_env(r: &mut Rng) -> Env {
    let mut e = Env::new();
    let path = match r.below(20) {
        0 => "/nonexistent/bin",
        1 => "/nonexistent/a:/nonexistent/b",
        2 => "/tmp/agentenv-none/bin:/usr/bin:/bin",
        _ => "/usr/bin:/bin",
    };
    e.insert("PATH".into(), path.into());
    e.insert("HOME".into(), "/tmp/agentenv-home".into());
    match r.below(4) {
        0 => {}
        1 => {
            e.insert("LANG".into(), "C".into());
        }
        2 => {
            e.insert("LC_ALL".into(), "C.UTF-8".into());
        }
        _ => {
            e.insert("LANG".into(), "C.UTF-8".into());
        }
    }
    e.insert("KEEP".into(), "same".into());
    if r.chance(50) {
        e.insert("OLD".into(), "old".into());
    }
    if r.chance(30) {
        e.insert("A".into(), "1".into());
    }
    if r.chance(10) {
        e.insert("TOKEN".into(), "".into());
    }
    e
}

fn gen_case(r: &mut Rng) -> Case {
    let env = gen_env(r);
    let accepted_only = r.chance(55);
    let crlf = r.chance(10);
    let mut text = Vec::new();
    let lines = r.below(9);
    for i in 0..lines {
        let mut line = Vec::new();
        let near = !accepted_only && r.chance(40);
        gen_line(r, &mut line, near, crlf, &env);
        text.extend_from_slice(&line);
        if i + 1 < lines || r.chance(85) {
            text.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
    }
    if !accepted_only && r.chance(3) {
        text.push(0xff);
    }
    Case {
        text,
        env,
        accepted_only,
    }
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn native_matches_bash_on_generated_files() {
    let bash = match support::tool("bash") {
        Some(b) => b,
        None => return,
    };
    const CASES: usize = 4000;
    const THREADS: usize = 4;
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let cases: Vec<Case> = (0..CASES).map(|_| gen_case(&mut r)).collect();
    let dir = tempfile::tempdir().unwrap();

    let chunks: Vec<&[Case]> = cases.chunks(CASES.div_ceil(THREADS)).collect();
    let results: Vec<Vec<(usize, String)>> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .enumerate()
            .map(|(t, chunk)| {
                let bash = bash.clone();
                let dir = dir.path().to_path_buf();
                s.spawn(move || {
                    let mut stats = [0usize; 6];
                    let mut failures = Vec::new();
                    let file = dir.join(format!("case-{t}.env"));
                    for (i, c) in chunk.iter().enumerate() {
                        std::fs::write(&file, &c.text).unwrap();
                        let native = evaluate(&c.text, &c.env);
                        let theirs = run_bash(&bash, &file, &c.env, &dir);
                        let idx = match (&native, c.accepted_only) {
                            (Outcome::Bash, true) => 0,
                            (Outcome::Bash, false) => 1,
                            (_, true) => 2,
                            (_, false) => 3,
                        };
                        stats[idx] += 1;
                        if idx == 0 && std::env::var_os("NATIVE_DEBUG").is_some() {
                            eprintln!("accepted->bash: {:?}", String::from_utf8_lossy(&c.text));
                        }
                        if theirs == BashResult::Failed {
                            stats[4] += 1;
                        }
                        if matches!(native, Outcome::Failed) {
                            stats[5] += 1;
                        }
                        if let Some(mine) = native_as_bash(&native) {
                            if mine != theirs {
                                failures.push(format!(
                                    "case {t}/{i}: file {:?} env PATH {:?}\n native {mine:?}\n bash   {theirs:?}",
                                    String::from_utf8_lossy(&c.text),
                                    c.env.get(std::ffi::OsStr::new("PATH")),
                                ));
                            }
                        }
                    }
                    let mut out = vec![(usize::MAX, String::new())];
                    out[0].1 = stats
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(",");
                    out.extend(failures.into_iter().map(|f| (0, f)));
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut stats = [0usize; 6];
    let mut failures = Vec::new();
    for per_thread in results {
        for (tag, s) in per_thread {
            if tag == usize::MAX {
                for (i, n) in s.split(',').enumerate() {
                    stats[i] += n.parse::<usize>().unwrap();
                }
            } else {
                failures.push(s);
            }
        }
    }
    let accepted = stats[0] + stats[2];
    let near = stats[1] + stats[3];
    eprintln!(
        "native_vs_bash: {CASES} files; accepted-grammar {accepted}: native {} / bash {}; \
         near-miss grammar {near}: native {} / bash {}; bash failed {} files, native said Failed for {}",
        stats[2], stats[0], stats[3], stats[1], stats[4], stats[5]
    );
    assert!(
        failures.is_empty(),
        "{} disagreements, first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(8)].join("\n")
    );
    // The native path must cover the plain-assignment majority.
    assert!(
        stats[2] * 100 >= accepted * 95,
        "native covered only {} of {accepted} accepted-grammar files",
        stats[2]
    );
    // The generator must exercise both outcomes of bash and of the subset.
    assert!(stats[3] > 0 && stats[1] > 0 && stats[4] > 0 && stats[5] > 0);
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn harness_sees_what_bash_does() {
    let bash = match support::tool("bash") {
        Some(b) => b,
        None => return,
    };
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("env");
    let mut env = Env::new();
    env.insert("PATH".into(), "/usr/bin:/bin".into());
    env.insert("GONE".into(), "x".into());
    std::fs::write(&f, "A=1\nunset GONE\n").unwrap();
    let r = run_bash(&bash, &f, &env, dir.path());
    let mut set = BTreeMap::new();
    set.insert(b"A".to_vec(), b"1".to_vec());
    assert_eq!(
        r,
        BashResult::Changes {
            set,
            removed: vec![b"GONE".to_vec()]
        }
    );
    std::fs::write(&f, "A=1\nexit 0\n").unwrap();
    assert_eq!(run_bash(&bash, &f, &env, dir.path()), BashResult::Failed);
}

/// The script both sides of this comparison use is byte for byte the one
/// `dotagents` 0.8.2 runs (read from the installed reference, not a copy).
#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn snapshot_script_is_the_references() {
    let Some(py) = support::venv_python_with("dotagents._env") else {
        return;
    };
    let out = Command::new(py)
        .args([
            "-c",
            "import sys, dotagents._env as e; sys.stdout.write(e._SOURCE_SCRIPT)",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), SOURCE_SCRIPT);
}
