//! Round-trip proof: generated values are rendered and read back by the
//! real consumer of each format, and must come back byte-exact.
//!
//! | format | reader (how it is read) |
//! | --- | --- |
//! | export | bash, dash, zsh: `. FILE && exec env -0` |
//! | fish | fish: `source FILE; and exec env -0` (UTF-8 locale) |
//! | dotenv | python-dotenv `dotenv_values(stream, interpolate=False)` |
//! | yaml | PyYAML `yaml.safe_load` |
//! | ini | `configparser.ConfigParser()` (default `BasicInterpolation`), `optionxform = str`, `read_string` |
//! | json | serde_json (UTF-8 values); Python `json.loads` + `surrogateescape` (any bytes) |
//!
//! Reading back through `env -0` also proves every assignment is *exported*.
//! What a format cannot carry is asserted too: names that are not POSIX
//! names vanish from export/fish/dotenv (and the file still sources
//! cleanly), ini writes a `; … omitted` comment for a value or key it cannot
//! hold, and undecodable bytes come back as `?` from the text formats.
//! NUL never occurs (an environment cannot hold it).

use crate::support;

use support::{Rng, Tree};

use agentenv::render::{render, Format, View};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Valid-UTF-8 fragments: every character class the formats treat
/// specially (no NUL: an environment cannot carry it).
const FRAGMENTS: &[&str] = &[
    "'",
    "\"",
    "`",
    "$",
    "\\",
    "\r",
    "\n",
    "\r\n",
    "\n\r",
    "\t",
    " ",
    "  ",
    "\u{1}",
    "\u{7}",
    "\u{8}",
    "\u{b}",
    "\u{c}",
    "\u{1b}",
    "\u{1c}",
    "\u{1f}",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{9f}",
    "\u{ad}",
    "\u{1680}",
    "\u{2000}",
    "\u{200b}",
    "\u{2028}",
    "\u{2029}",
    "\u{202f}",
    "\u{3000}",
    "\u{feff}",
    "\u{2018}",
    "\u{2019}",
    "\u{201c}",
    "😀",
    "é",
    "中文",
    "\u{e000}",
    "%",
    "%%",
    "%(x)s",
    "#",
    ";",
    "=",
    ":",
    "~",
    "[",
    "]",
    "{",
    "}",
    "${PATH}",
    "${A:-b}",
    "$(echo pwned)",
    "`echo pwned`",
    "$HOME",
    "-",
    "*",
    "&",
    "|",
    ">",
    "@",
    "?",
    "!",
    "/",
    "yes",
    "no",
    "null",
    "on",
    "1_000",
    "0x1F",
    ".inf",
    "1:30",
    "2001-12-14",
    "abc",
    "x",
    "\u{f600}",
    "\u{f6ff}",
    "\u{fdd0}",
    "\u{fffd}",
    "\u{fffe}",
    "\u{ffff}",
    "\u{10ffff}",
    "\u{feff}x",
    "it's",
    "a=b",
    "\\n",
    "\\'",
    "\\\"",
    "'\\''",
    "\"'\"",
];

/// Whole values worth having verbatim.
const WHOLE: &[&str] = &[
    "",
    " ",
    "yes",
    "No",
    "NULL",
    "~",
    "1_000",
    "0x1F",
    ".inf",
    "'",
    "\"",
    "''",
    "\"\"",
    "'x'",
    "\"x\"",
    "\r",
    "\n",
    "\r\n",
    "#",
    ";x",
    "%",
    " lead",
    "trail ",
    "\tboth\t",
    "\u{a0}nbsp",
    "x\u{85}",
    "l1\nl2",
    "l1\n l2",
    "l1\n#c",
    "l1\n;c",
    "l1\n\nl3",
    "l1\n\tl2",
    "a\u{1}b\u{7f}c\u{85}",
    "-n",
    "-e",
    "--",
    "#!/bin/sh",
];

fn gen_value(r: &mut Rng) -> String {
    if r.below(100) < 15 {
        return WHOLE[r.below(WHOLE.len())].to_string();
    }
    let mut v = String::new();
    for _ in 0..r.below(7) {
        v.push_str(FRAGMENTS[r.below(FRAGMENTS.len())]);
    }
    v
}

/// `n` generated values plus every fragment and whole value on its own.
fn values(seed: u64, n: usize) -> Vec<String> {
    let mut r = Rng(seed);
    let mut out: Vec<String> = FRAGMENTS
        .iter()
        .chain(WHOLE)
        .map(|s| s.to_string())
        .collect();
    out.extend((0..n).map(|_| gen_value(&mut r)));
    out
}

/// Names no POSIX-targeted format can carry (dropped by export/fish/dotenv).
const BAD_NAMES: &[&str] = &[
    "A-B",
    "x(86)",
    "BASH_FUNC_f%%",
    "1X",
    "A.B",
    "é",
    "A B",
    "A}",
];

fn view_of(vals: &[String], bad: bool) -> View {
    let mut vars: Vec<(OsString, OsString)> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| (OsString::from(format!("V{i}")), OsString::from(v)))
        .collect();
    if bad {
        vars.extend(
            BAD_NAMES
                .iter()
                .map(|k| (OsString::from(k), OsString::from("bad"))),
        );
    }
    View::of(vars)
}

/// Run `cmd` with a clean, UTF-8 environment (plus `extra`), and parse its
/// `env -0` dump.
fn dump_env(mut cmd: Command, extra: &[(&str, &str)], what: &str) -> BTreeMap<Vec<u8>, Vec<u8>> {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("LANG", "C.UTF-8")
        .env("HOME", std::env::temp_dir());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{what}: exit {:?}, stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .filter_map(|e| {
            let i = e.iter().position(|b| *b == b'=')?;
            Some((e[..i].to_vec(), e[i + 1..].to_vec()))
        })
        .collect()
}

/// The command that sources `file` in `shell` and dumps the environment.
fn source_cmd(shell: &str, exe: &Path, file: &Path) -> Command {
    let mut c = Command::new(exe);
    match shell {
        "fish" => c.args(["--no-config", "-c", "source $argv[1]; and exec env -0"]),
        "zsh" => c.args(["-f", "-c", ". \"$1\" && exec env -0", "zsh"]),
        "bash" => c.args([
            "--norc",
            "--noprofile",
            "-c",
            ". \"$1\" && exec env -0",
            "bash",
        ]),
        _ => c.args(["-c", ". \"$1\" && exec env -0", shell]),
    };
    c.arg(file);
    c
}

fn check_shell(shell: &str, format: Format) {
    check_shell_in(shell, format, "C.UTF-8");
}

fn check_shell_in(shell: &str, format: Format, lang: &str) {
    let Some(exe) = support::tool(shell) else {
        return;
    };
    let dir = Tree::new();
    for (batch, seed) in [11u64, 12, 13].into_iter().enumerate() {
        let vals = values(seed, 400);
        let text = render(format, &view_of(&vals, true));
        for bad in BAD_NAMES {
            assert!(
                !text.contains(&format!("{bad}=")) && !text.contains(&format!(" {bad} ")),
                "{shell}: {bad} must be dropped"
            );
        }
        let file = dir.write(&format!("b{batch}"), &text);
        let env = dump_env(source_cmd(shell, &exe, &file), &[("LANG", lang)], shell);
        let mut wrong = Vec::new();
        for (i, v) in vals.iter().enumerate() {
            let got = env.get(format!("V{i}").as_bytes());
            if got.map(|g| g.as_slice()) != Some(v.as_bytes()) {
                wrong.push(format!(
                    "V{i}: want {v:?} got {:?}",
                    got.map(|g| String::from_utf8_lossy(g).into_owned())
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{shell} (LANG={lang}) read {} of {} values back wrong:\n{}",
            wrong.len(),
            vals.len(),
            wrong[..wrong.len().min(10)].join("\n")
        );
    }
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn export_round_trips_through_bash() {
    check_shell("bash", Format::Export);
}

#[test]
#[cfg_attr(missing = "dash", ignore = "needs dash")]
fn export_round_trips_through_dash() {
    check_shell("dash", Format::Export);
}

#[test]
#[cfg_attr(missing = "zsh", ignore = "needs zsh")]
fn export_round_trips_through_zsh() {
    check_shell("zsh", Format::Export);
}

#[test]
#[cfg_attr(missing = "fish", ignore = "needs fish")]
fn fish_round_trips_through_fish() {
    check_shell("fish", Format::Fish);
}

/// The C locale changes nothing: the shells carry the UTF-8 bytes as is.
#[test]
#[cfg_attr(
    any(missing = "bash", missing = "dash", missing = "zsh", missing = "fish"),
    ignore = "needs bash, dash, zsh and fish"
)]
fn shells_round_trip_in_the_c_locale_too() {
    for (shell, format) in [
        ("bash", Format::Export),
        ("dash", Format::Export),
        ("zsh", Format::Export),
        ("fish", Format::Fish),
    ] {
        check_shell_in(shell, format, "C");
    }
}

/// Removals: `unset` / `set -e` take an inherited variable away; the
/// diff-mode PATH short form completes from the sourcing shell's PATH.
#[test]
#[cfg_attr(
    any(missing = "bash", missing = "dash", missing = "zsh", missing = "fish"),
    ignore = "needs bash, dash, zsh and fish"
)]
fn removals_and_path_short_form_in_the_shells() {
    let dir = Tree::new();
    let sys_path = std::env::var("PATH").unwrap_or_default();
    let new_path = format!("/opt/it's here/bin:/x:{sys_path}");
    let mut base = agentenv::core::Env::new();
    base.insert("PATH".into(), sys_path.clone().into());
    base.insert("GONE".into(), "x".into());
    base.insert("KEEP".into(), "same".into());
    let mut ch = agentenv::core::ChangeSet::new();
    ch.set("PATH", new_path.clone());
    ch.set("KEEP", "same");
    ch.set("NEW", "v");
    ch.remove("GONE");
    let view = View::diff(&base, &ch);
    for (shell, format) in [
        ("bash", Format::Export),
        ("dash", Format::Export),
        ("zsh", Format::Export),
        ("fish", Format::Fish),
    ] {
        let Some(exe) = support::tool(shell) else {
            continue;
        };
        let text = render(format, &view);
        if format == Format::Export {
            assert!(text.contains("\"${PATH:+:$PATH}\""), "{text}");
        }
        let file = dir.write(shell, &text);
        let env = dump_env(
            source_cmd(shell, &exe, &file),
            &[("GONE", "x"), ("KEEP", "same")],
            shell,
        );
        assert_eq!(
            env.get(&b"PATH"[..]),
            Some(&new_path.as_bytes().to_vec()),
            "{shell}"
        );
        assert_eq!(env.get(&b"NEW"[..]), Some(&b"v".to_vec()), "{shell}");
        assert_eq!(env.get(&b"KEEP"[..]), Some(&b"same".to_vec()), "{shell}");
        assert!(
            !env.contains_key(&b"GONE"[..]),
            "{shell}: GONE must be unset"
        );
    }
}

/// Undecodable bytes: text formats print `?` per byte (as the reference).
#[test]
#[cfg_attr(
    any(missing = "bash", missing = "fish"),
    ignore = "needs bash and fish"
)]
fn undecodable_bytes_come_back_as_question_marks_from_the_shells() {
    let dir = Tree::new();
    let view = View::of([(
        OsString::from("B"),
        OsString::from_vec(b"a\xffb\xe2\x82c".to_vec()),
    )]);
    for (shell, format) in [("bash", Format::Export), ("fish", Format::Fish)] {
        let Some(exe) = support::tool(shell) else {
            continue;
        };
        let file = dir.write(shell, render(format, &view));
        let env = dump_env(source_cmd(shell, &exe, &file), &[], shell);
        assert_eq!(env.get(&b"B"[..]), Some(&b"a?b??c".to_vec()), "{shell}");
    }
}

const PY_READERS: &str = r#"
import configparser, io, json, sys
import yaml
from dotenv import dotenv_values

def enc(v):
    if v is None:
        return None
    if not isinstance(v, str):
        return "TYPE:" + type(v).__name__
    return v.encode("utf-8", "surrogateescape").hex()

def keyed(d):
    out = []
    for k, v in d.items():
        out.append([k if isinstance(k, str) else "TYPE:" + type(k).__name__, enc(v)])
    return out

spec = json.load(sys.stdin)
out = {}
out["dotenv"] = keyed(dotenv_values(stream=io.StringIO(spec["dotenv"]), interpolate=False))
out["yaml"] = keyed(yaml.safe_load(spec["yaml"]) or {})
cp = configparser.ConfigParser()
cp.optionxform = str
cp.read_string(spec["ini"])
out["ini"] = keyed({k: cp["env"][k] for k in cp["env"]})
out["json"] = keyed(json.loads(spec["json"]))
json.dump(out, sys.stdout)
"#;

type Read = BTreeMap<String, Option<Vec<u8>>>;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Render `view` in the four data formats and read them with Python.
fn py_read(py: &Path, view: &View) -> BTreeMap<String, Read> {
    let spec = serde_json::json!({
        "dotenv": render(Format::Dotenv, view),
        "yaml": render(Format::Yaml, view),
        "ini": render(Format::Ini, view),
        "json": render(Format::Json, view),
    });
    let mut child = Command::new(py)
        .args(["-c", PY_READERS])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&spec).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let w = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    w.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "python readers failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut res = BTreeMap::new();
    for fmt in ["dotenv", "yaml", "ini", "json"] {
        let mut m = Read::new();
        for pair in v[fmt].as_array().unwrap() {
            let k = pair[0].as_str().unwrap().to_string();
            assert!(!k.starts_with("TYPE:"), "{fmt}: a key came back as {k}");
            let val = pair[1].as_str().map(|s| {
                assert!(
                    !s.starts_with("TYPE:"),
                    "{fmt}: value of {k} came back as {s}"
                );
                unhex(s)
            });
            assert!(m.insert(k, val).is_none());
        }
        res.insert(fmt.to_string(), m);
    }
    res
}

/// What agentenv's INI writer can hold: the reference's rule (no CR, no
/// surrounding whitespace, no continuation line starting with whitespace,
/// `#` or `;`) plus one deliberate addition: no line may end in whitespace,
/// since configparser strips every line (the reference misses this and
/// prints values that come back changed).
fn ws(c: char) -> bool {
    matches!(c, '\u{9}'..='\u{d}' | '\u{1c}'..='\u{20}' | '\u{85}' | '\u{a0}' | '\u{1680}'
        | '\u{2000}'..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}')
}

fn ini_representable(v: &str) -> bool {
    !v.contains('\r')
        && !v.starts_with(ws)
        && !v.ends_with(ws)
        && v.split('\n').all(|l| !l.ends_with(ws))
        && v.split('\n')
            .skip(1)
            .all(|l| !l.starts_with(ws) && !l.starts_with(['#', ';']))
}

/// What configparser returns for a value the writer emitted: exactly it.
fn ini_expected(v: &str) -> String {
    v.to_string()
}

#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn data_formats_round_trip_through_their_readers() {
    let Some(py) = support::venv_python_with("dotenv, yaml, configparser") else {
        return;
    };
    for seed in [21u64, 22, 23] {
        let vals = values(seed, 600);
        let mut view = view_of(&vals, true);
        view.removals = vec![OsString::from("REMOVED")];
        let read = py_read(&py, &view);

        // dotenv: every value, exactly; bad names dropped; no removal.
        let d = &read["dotenv"];
        for (i, v) in vals.iter().enumerate() {
            assert_eq!(
                d.get(&format!("V{i}")),
                Some(&Some(v.as_bytes().to_vec())),
                "dotenv V{i} = {v:?}"
            );
        }
        assert_eq!(d.len(), vals.len(), "dotenv: only the POSIX names");

        // yaml and json: every name (bad ones too) and the removal as null.
        for fmt in ["yaml", "json"] {
            let m = &read[fmt];
            for (i, v) in vals.iter().enumerate() {
                assert_eq!(
                    m.get(&format!("V{i}")),
                    Some(&Some(v.as_bytes().to_vec())),
                    "{fmt} V{i} = {v:?}"
                );
            }
            for bad in BAD_NAMES {
                assert_eq!(m.get(*bad), Some(&Some(b"bad".to_vec())), "{fmt} {bad}");
            }
            assert_eq!(m.get("REMOVED"), Some(&None), "{fmt} removal");
            assert_eq!(m.len(), vals.len() + BAD_NAMES.len() + 1);
        }

        // ini: the representable values exactly; the rest named in a
        // comment and absent for the reader.
        let text = render(Format::Ini, &view);
        let m = &read["ini"];
        let mut omitted = 0;
        let mut lossy = 0;
        for (i, v) in vals.iter().enumerate() {
            let k = format!("V{i}");
            if ini_representable(v) {
                let want = ini_expected(v);
                if want != *v {
                    lossy += 1;
                }
                assert_eq!(m.get(&k), Some(&Some(want.into_bytes())), "ini {k} = {v:?}");
            } else {
                omitted += 1;
                assert!(m.get(&k).is_none(), "ini {k} should be omitted");
                assert!(
                    text.contains(&format!("\n; {k} omitted: not representable in INI\n")),
                    "ini comment for {k}"
                );
            }
        }
        assert!(omitted > 0 && omitted < vals.len());
        assert!(lossy < vals.len() / 10, "{lossy} lossy ini values");
        assert!(m.get("REMOVED").is_none());

        // serde_json reads the same JSON text back exactly.
        let json: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&render(Format::Json, &view)).unwrap();
        for (i, v) in vals.iter().enumerate() {
            assert_eq!(json[&format!("V{i}")], serde_json::Value::String(v.clone()));
        }
        assert_eq!(json["REMOVED"], serde_json::Value::Null);
    }
}

/// Keys INI cannot hold are named only as "a var" (the key itself is the
/// problem); configparser sees neither.
#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn ini_unrepresentable_keys_are_commented() {
    let Some(py) = support::venv_python_with("configparser, yaml, dotenv") else {
        return;
    };
    let keys = ["K=1", "K:2", "#K", ";K", "[K", " K", "K ", ""];
    let mut vars: Vec<(OsString, OsString)> = keys
        .iter()
        .map(|k| (OsString::from(k), OsString::from("v")))
        .collect();
    vars.push(("OK".into(), "v".into()));
    let view = View::of(vars);
    let text = render(Format::Ini, &view);
    assert_eq!(
        text.matches("; a var omitted: not representable in INI\n")
            .count(),
        keys.len()
    );
    let read = py_read(&py, &view);
    assert_eq!(read["ini"].len(), 1);
    assert_eq!(read["ini"].get("OK"), Some(&Some(b"v".to_vec())));
}

/// Non-UTF-8 bytes: JSON (`\udcXX`) and YAML (`\udcXX`) carry them exactly
/// to a Python reader that re-encodes with `surrogateescape`; dotenv and ini
/// print `?` per byte.
#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn undecodable_bytes_through_the_data_readers() {
    let Some(py) = support::venv_python_with("dotenv, yaml, configparser") else {
        return;
    };
    let raw = b"a\xffb\xe2\x82c\xed\xa0\x80".to_vec();
    let view = View::of([(OsString::from("B"), OsString::from_vec(raw.clone()))]);
    let read = py_read(&py, &view);
    assert_eq!(read["json"]["B"], Some(raw.clone()));
    assert_eq!(read["yaml"]["B"], Some(raw));
    assert_eq!(read["dotenv"]["B"], Some(b"a?b??c???".to_vec()));
    assert_eq!(read["ini"]["B"], Some(b"a?b??c???".to_vec()));
    // A strict JSON parser rejects the lone surrogates.
    assert!(serde_json::from_str::<serde_json::Value>(&render(Format::Json, &view)).is_err());
}

/// Names a YAML reader would type (`yes`, `Y`, `ON`, `null`, numbers …)
/// are quoted, so PyYAML returns every name as the same string.
#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn yaml_typed_names_read_back_as_strings() {
    let Some(py) = support::venv_python_with("dotenv, yaml, configparser") else {
        return;
    };
    let names = [
        "yes",
        "Yes",
        "YES",
        "no",
        "No",
        "y",
        "Y",
        "n",
        "N",
        "on",
        "ON",
        "off",
        "Off",
        "true",
        "True",
        "false",
        "FALSE",
        "null",
        "Null",
        "NULL",
        "~",
        "1",
        "1_000",
        "0x1F",
        "0o17",
        "1.5e3",
        ".5",
        ".inf",
        "-.inf",
        ".nan",
        "1:30",
        "2001-12-14",
        "A-B",
        "x(86)",
        "a b",
        "#x",
        "&a",
        "*a",
        "!t",
        "[x]",
        "{x}",
        "'q'",
        "\"q\"",
        "- x",
        "? x",
        "",
        "é",
        "yesno",
        "nulls",
        "_",
        "on_off",
    ];
    let view = View::of(
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from(format!("v:{n}")))),
    );
    let read = py_read(&py, &view);
    let y = &read["yaml"];
    assert_eq!(y.len(), names.len());
    for n in names {
        assert_eq!(
            y.get(n),
            Some(&Some(format!("v:{n}").into_bytes())),
            "yaml name {n:?}"
        );
    }
}
