//! `src/compat` against the runtimes it reproduces: each rule is run in
//! the real runtime (Node for ECMAScript and `path`, CPython 3.11 for
//! `str` and the path modules) over every code point or a generated corpus
//! of paths, and compared with agentenv's answer.
//!
//! A missing runtime is a visible skip (a failure under
//! `AGENTENV_REQUIRE_ALL=1`). Go is not covered here: no Go toolchain is
//! installed where these tests run, so `compat::go` is tested in its unit
//! tests against the fullsend reference's cases and the documented
//! `path.Clean` rules.

use crate::support;

use agentenv::internals::{ident, js, node, python};
use serde_json::Value;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Run `prog` with `args`, `input` on stdin; its stdout parsed as JSON.
fn run_json(prog: &Path, args: &[&str], input: &str) -> Value {
    let mut child = Command::new(prog)
        .args(args)
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn runtime");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{} failed", prog.display());
    serde_json::from_slice(&out.stdout).expect("runtime printed JSON")
}

/// Every Unicode scalar value.
fn all_chars() -> impl Iterator<Item = char> {
    (0..=0x10ffffu32).filter_map(char::from_u32)
}

fn code_points(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|n| n.as_u64().unwrap() as u32)
        .collect()
}

/// CPython 3.11 (the reference interpreter, Unicode 14.0.0), or a skip.
fn python311() -> Option<PathBuf> {
    let py = support::tool("python3")?;
    let out = Command::new(&py)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .ok()?;
    if out.stdout.trim_ascii() == b"3.11" {
        Some(py)
    } else {
        support::skip(
            "python3 3.11",
            "the Unicode tables are the reference interpreter's (3.11)",
        );
        None
    }
}

/// Every string of three pieces (with repeats): the edge cases side by
/// side and at either end.
fn triples(pieces: &[&str]) -> Vec<String> {
    let mut out = Vec::with_capacity(pieces.len().pow(3));
    for a in pieces {
        for b in pieces {
            for c in pieces {
                out.push(format!("{a}{b}{c}"));
            }
        }
    }
    out
}

// ---------------------------------------------------------------- text

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn js_whitespace_is_nodes_over_every_code_point() {
    let Some(node) = support::tool("node") else {
        return;
    };
    // Both of ECMAScript's views: the `\s` class and what `trim` strips.
    let prog = r#"
        const re = [], trim = [];
        for (let c = 0; c <= 0x10ffff; c++) {
            if (c >= 0xd800 && c <= 0xdfff) continue;
            const s = String.fromCodePoint(c);
            if (/^\s$/u.test(s)) re.push(c);
            if (s.trim() === '') trim.push(c);
        }
        process.stdout.write(JSON.stringify({re, trim}));
    "#;
    let v = run_json(&node, &["-e", prog], "");
    let ours: Vec<u32> = all_chars()
        .filter(|c| js::is_whitespace(*c))
        .map(|c| c as u32)
        .collect();
    assert_eq!(ours, code_points(&v["re"]), "\\s");
    assert_eq!(ours, code_points(&v["trim"]), "trim");
    for b in 0..0x80u8 {
        assert_eq!(js::is_ascii_whitespace(b), ours.contains(&(b as u32)));
    }
}

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn js_trim_is_nodes() {
    let Some(node) = support::tool("node") else {
        return;
    };
    let pieces = [
        "", " ", "a", "a b", "\t", "\u{feff}", "\u{85}", "\u{a0}", "\u{2028}", "\u{180e}", "é",
        "\u{3000}", "\n", "\u{1c}",
    ];
    let corpus = triples(&pieces);
    let input = serde_json::to_string(&corpus).unwrap();
    let prog = r#"
        let s = ''; process.stdin.on('data', d => s += d);
        process.stdin.on('end', () => process.stdout.write(
            JSON.stringify(JSON.parse(s).map(x => x.trim()))));
    "#;
    let theirs = run_json(&node, &["-e", prog], &input);
    for (s, t) in corpus.iter().zip(theirs.as_array().unwrap()) {
        let ours = std::str::from_utf8(js::trim(s.as_bytes())).unwrap();
        assert_eq!(ours, t.as_str().unwrap(), "trim of {s:?}");
    }
}

#[test]
#[cfg_attr(
    missing = "python311",
    ignore = "needs python3 3.11 (the reference interpreter's Unicode tables)"
)]
fn python_text_sets_are_cpythons_over_every_code_point() {
    let Some(py) = python311() else {
        return;
    };
    let prog = r#"
import json, sys
space, printable, breaks = [], [], []
for c in range(0x110000):
    ch = chr(c)
    if ch.isspace(): space.append(c)
    if not ch.isprintable(): printable.append(c)
    if len(("a" + ch + "b").splitlines()) == 2: breaks.append(c)
json.dump({"space": space, "not_printable": printable, "breaks": breaks}, sys.stdout)
"#;
    let v = run_json(&py, &["-c", prog], "");
    let chars: Vec<char> = all_chars().collect();
    let pick = |f: &dyn Fn(char) -> bool| -> Vec<u32> {
        chars.iter().filter(|c| f(**c)).map(|c| *c as u32).collect()
    };
    // Surrogates are not chars; CPython's answer for them is "not space",
    // "not printable" and "no break", which the code-point forms agree with.
    let no_surrogates = |v: Vec<u32>| -> Vec<u32> {
        v.into_iter()
            .filter(|c| !(0xd800..=0xdfff).contains(c))
            .collect()
    };
    assert_eq!(pick(&python::is_space), code_points(&v["space"]));
    assert_eq!(
        pick(&|c| !python::is_printable(c)),
        no_surrogates(code_points(&v["not_printable"]))
    );
    assert_eq!(
        pick(&|c| python::is_line_break_code(c as u32)),
        code_points(&v["breaks"])
    );
    for s in 0xd800..=0xdfffu32 {
        assert!(!python::is_space_code(s) && !python::is_line_break_code(s));
    }
}

#[test]
#[cfg_attr(
    missing = "python311",
    ignore = "needs python3 3.11 (the reference interpreter's Unicode tables)"
)]
fn python_strip_and_splitlines_are_cpythons() {
    let Some(py) = python311() else {
        return;
    };
    let pieces = [
        "", " ", "a", "\r", "\n", "\r\n", "\u{1c}", "\u{85}", "\u{feff}", "\u{2029}", "\u{3000}",
        "é",
    ];
    let corpus = triples(&pieces);
    let input = serde_json::to_string(&corpus).unwrap();
    let prog = r#"
import json, sys
xs = json.load(sys.stdin)
json.dump([[x.strip(), x.splitlines(), x.strip() != x] for x in xs], sys.stdout)
"#;
    let theirs = run_json(&py, &["-c", prog], &input);
    let text = |t: &[u32]| -> String { t.iter().map(|&c| char::from_u32(c).unwrap()).collect() };
    for (s, t) in corpus.iter().zip(theirs.as_array().unwrap()) {
        assert_eq!(python::strip(s), t[0].as_str().unwrap(), "strip {s:?}");
        let codes: Vec<u32> = s.chars().map(|c| c as u32).collect();
        assert_eq!(text(python::strip_codes(&codes)), t[0].as_str().unwrap());
        let lines: Vec<String> = python::splitlines_codes(&codes)
            .into_iter()
            .map(text)
            .collect();
        let want: Vec<&str> = t[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l.as_str().unwrap())
            .collect();
        assert_eq!(lines, want, "splitlines {s:?}");
        assert_eq!(
            python::has_surrounding_space(s),
            t[2].as_bool().unwrap(),
            "{s:?}"
        );
    }
}

#[test]
#[cfg_attr(
    missing = "python311",
    ignore = "needs python3 3.11 (the reference interpreter's Unicode tables)"
)]
fn surrogateescape_decoding_is_cpythons() {
    let Some(py) = python311() else {
        return;
    };
    // Every one- and two-byte string, and generated longer ones mixing
    // valid sequences, stray continuation bytes and truncated leads.
    let mut corpus: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for a in (0..=255u8).step_by(7) {
        for b in 0..=255u8 {
            corpus.push(vec![a, b]);
        }
    }
    let parts: [&[u8]; 10] = [
        b"a",
        "é".as_bytes(),
        "€".as_bytes(),
        "😀".as_bytes(),
        b"\x80",
        b"\xc3",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\xed\xa0\x80",
        b"\xff",
    ];
    let mut rng = support::Rng(15);
    for _ in 0..2000 {
        let n = rng.below(6);
        corpus.push((0..n).flat_map(|_| rng.pick(&parts).to_vec()).collect());
    }
    let input = serde_json::to_string(&corpus.iter().map(|p| hex(p)).collect::<Vec<_>>()).unwrap();
    let prog = r#"
import json, sys
xs = json.load(sys.stdin)
json.dump([[ord(c) for c in bytes.fromhex(x).decode("utf-8", "surrogateescape")] for x in xs], sys.stdout)
"#;
    let theirs = run_json(&py, &["-c", prog], &input);
    for (b, t) in corpus.iter().zip(theirs.as_array().unwrap()) {
        assert_eq!(python::decode_surrogateescape(b), code_points(t), "{b:x?}");
    }
}

#[test]
#[cfg_attr(
    missing = "python311",
    ignore = "needs python3 3.11 (the reference interpreter's Unicode tables)"
)]
fn ident_is_the_posix_name_regex_in_python() {
    let Some(py) = python311() else {
        return;
    };
    let alphabet = ["A", "z", "_", "0", "9", "-", ".", " ", "é", "$", "\n", "="];
    let mut corpus = vec![String::new()];
    for a in alphabet {
        corpus.push(a.to_string());
        for b in alphabet {
            corpus.push(format!("{a}{b}"));
            for c in alphabet {
                corpus.push(format!("{a}{b}{c}"));
            }
        }
    }
    let input = serde_json::to_string(&corpus).unwrap();
    let prog = r#"
import json, re, sys
name = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
json.dump([bool(name.match(x)) for x in json.load(sys.stdin)], sys.stdout)
"#;
    let theirs = run_json(&py, &["-c", prog], &input);
    for (s, t) in corpus.iter().zip(theirs.as_array().unwrap()) {
        assert_eq!(ident::is_name(s.as_bytes()), t.as_bool().unwrap(), "{s:?}");
    }
}

// ---------------------------------------------------------------- paths

/// Paths built from `segments`, up to three of them, with each root
/// spelling and with and without a trailing slash.
fn path_corpus(segments: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut bodies: Vec<Vec<u8>> = vec![Vec::new()];
    let mut last = bodies.clone();
    for _ in 0..3 {
        let mut next = Vec::new();
        for b in &last {
            for s in segments {
                let mut p = b.clone();
                if !p.is_empty() {
                    p.push(b'/');
                }
                p.extend_from_slice(s);
                next.push(p);
            }
        }
        bodies.extend(next.iter().cloned());
        last = next;
    }
    let mut out = Vec::new();
    for root in [&b""[..], b"/", b"//", b"///"] {
        for body in &bodies {
            for trail in [&b""[..], b"/"] {
                out.push([root, body, trail].concat());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(v: &Value) -> Vec<u8> {
    let s = v.as_str().unwrap();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
#[cfg_attr(
    missing = "python311",
    ignore = "needs python3 3.11 (the reference interpreter's Unicode tables)"
)]
fn python_paths_are_cpythons() {
    let Some(py) = python311() else {
        return;
    };
    let corpus = path_corpus(&[b"", b".", b"..", b"a", b"...", b" b", b"\xff", b"~"]);
    let input = serde_json::to_string(&corpus.iter().map(|p| hex(p)).collect::<Vec<_>>()).unwrap();
    // Bytes in and out (hex), so undecodable bytes take part.
    let prog = r#"
import json, os, pathlib, posixpath, sys
h = bytes.hex
out = []
for x in json.load(sys.stdin):
    p = bytes.fromhex(x)
    head, tail = posixpath.split(p)
    out.append([
        h(os.fsencode(str(pathlib.PurePosixPath(os.fsdecode(p))))),
        h(posixpath.normpath(p)),
        h(head), h(tail),
        h(posixpath.join(p, b"x")), h(posixpath.join(b"/w/", p)),
        h(posixpath.abspath(p)),
    ])
json.dump({"cwd": h(os.fsencode(os.getcwd())), "out": out}, sys.stdout)
"#;
    let v = run_json(&py, &["-c", prog], &input);
    let cwd = unhex(&v["cwd"]);
    for (p, t) in corpus.iter().zip(v["out"].as_array().unwrap()) {
        let shown = String::from_utf8_lossy(p);
        assert_eq!(
            python::pure_posix(p),
            unhex(&t[0]),
            "PurePosixPath {shown:?}"
        );
        assert_eq!(python::normpath(p), unhex(&t[1]), "normpath {shown:?}");
        let (head, tail) = python::split(p);
        assert_eq!(
            (head, tail),
            (unhex(&t[2]), unhex(&t[3])),
            "split {shown:?}"
        );
        assert_eq!(python::join(p, b"x"), unhex(&t[4]), "join {shown:?}");
        assert_eq!(python::join(b"/w/", p), unhex(&t[5]), "join {shown:?}");
        assert_eq!(python::abspath(p, &cwd), unhex(&t[6]), "abspath {shown:?}");
    }
}

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn node_paths_are_nodes() {
    let Some(node) = support::tool("node") else {
        return;
    };
    // Node's path functions take strings: the corpus is UTF-8.
    let corpus: Vec<String> = path_corpus(&[b"", b".", b"..", b"a", b"...", b" b", b"$X", b"~"])
        .into_iter()
        .map(|p| String::from_utf8(p).unwrap())
        .collect();
    let cwds = ["/", "/w", "/w/x/", "//w"];
    let input = serde_json::to_string(&corpus).unwrap();
    let prog = r#"
        const path = require('path').posix;
        const cwds = ['/', '/w', '/w/x/', '//w'];
        let s = ''; process.stdin.on('data', d => s += d);
        process.stdin.on('end', () => process.stdout.write(JSON.stringify(
            JSON.parse(s).map(p => [
                cwds.map(c => path.resolve(c, p)),
                path.join(p, '.env'),
                path.join('/w', p),
                path.normalize(p),
            ]))));
    "#;
    let theirs = run_json(&node, &["-e", prog], &input);
    for (p, t) in corpus.iter().zip(theirs.as_array().unwrap()) {
        for (i, cwd) in cwds.iter().enumerate() {
            let ours = node::resolve(Path::new(cwd), OsStr::new(p));
            assert_eq!(
                ours.as_os_str().as_bytes(),
                t[0][i].as_str().unwrap().as_bytes(),
                "resolve({cwd:?}, {p:?})"
            );
        }
        let ours = node::join(Path::new(p), ".env");
        assert_eq!(
            ours.to_str().unwrap(),
            t[1].as_str().unwrap(),
            "join({p:?}, .env)"
        );
        // `normalize` is Node's without the trailing-separator rule.
        let want = t[3].as_str().unwrap();
        let want = match want.strip_suffix('/') {
            Some(w) if !w.is_empty() => w,
            _ => want,
        };
        let ours = node::normalize(p.as_bytes());
        assert_eq!(
            std::str::from_utf8(&ours).unwrap(),
            want,
            "normalize({p:?})"
        );
        // path.join('/w', p) when p has no trailing separator.
        if !p.ends_with('/') {
            let ours = node::join(Path::new("/w"), p);
            assert_eq!(
                ours.to_str().unwrap(),
                t[2].as_str().unwrap(),
                "join(/w, {p:?})"
            );
        }
    }
}
