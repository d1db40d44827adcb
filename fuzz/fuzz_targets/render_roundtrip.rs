//! Rendering then reading back gives the same values: JSON through
//! serde_json, YAML through serde-saphyr, export through a decoder of the
//! POSIX single-quote forms the renderer emits, fish through a decoder of
//! its `\\`/`\'` quoting, INI through a decoder of configparser's line
//! rules (every line is a section, a comment, `K=V` or a tab continuation;
//! `%%` → `%`), github and docker through small readers of the
//! `$GITHUB_ENV` and `--env-file` rules (every value read back exact or
//! reported as an omission, nothing else read). (The real shells, Python
//! readers, the runner-following reader and the docker CLI are exercised by
//! tests/it/roundtrip.rs and tests/it/integrations.rs.)
#![no_main]
use agentenv::render::{render, render_checked, Format, View};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;
use std::ffi::OsString;

fn is_ident(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// Decode `export K='…'` lines (with `'\''` and `'"$(printf '\r')"'`).
fn decode_export(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        if rest == "\n" {
            break;
        }
        let line = rest.strip_prefix("export ").expect("export prefix");
        let eq = line.find('=').expect("=");
        let key = &line[..eq];
        let mut s = &line[eq + 1..];
        let mut val = String::new();
        loop {
            if let Some(r) = s.strip_prefix('\'') {
                let end = r.find('\'').expect("closing quote");
                val.push_str(&r[..end]);
                s = &r[end + 1..];
            } else if let Some(r) = s.strip_prefix("\\'") {
                val.push('\'');
                s = r;
            } else if let Some(r) = s.strip_prefix("\"$(printf '\\r')\"") {
                val.push('\r');
                s = r;
            } else {
                break;
            }
        }
        out.insert(key.to_string(), val);
        rest = s.strip_prefix('\n').expect("line end");
    }
    out
}

/// Decode `set -gx K '…'` lines (`\\` → `\`, `\'` → `'`).
fn decode_fish(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        if rest == "\n" {
            break;
        }
        let line = rest.strip_prefix("set -gx ").expect("set -gx prefix");
        let sp = line.find(" '").expect("space quote");
        let key = &line[..sp];
        let mut chars = line[sp + 2..].char_indices();
        let mut val = String::new();
        let end = loop {
            match chars.next().expect("closing quote") {
                (_, '\\') => match chars.next().expect("escaped char") {
                    (_, c @ ('\\' | '\'')) => val.push(c),
                    (_, c) => panic!("unexpected escape {c:?}"),
                },
                (i, '\'') => break i,
                (_, c) => val.push(c),
            }
        };
        out.insert(key.to_string(), val);
        rest = line[sp + 2 + end + 1..]
            .strip_prefix('\n')
            .expect("line end");
    }
    out
}

/// Decode the INI output as configparser reads it (keys kept as written),
/// asserting every line has a shape configparser accepts.
fn decode_ini(text: &str) -> (BTreeMap<String, String>, usize) {
    let mut lines = text.strip_suffix('\n').expect("final LF").split('\n');
    assert_eq!(lines.next(), Some("[env]"));
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut comments = 0;
    let mut last: Option<String> = None;
    for line in lines {
        if let Some(cont) = line.strip_prefix('\t') {
            let k = last.as_ref().expect("continuation after an entry");
            let v = out.get_mut(k).unwrap();
            v.push('\n');
            v.push_str(&cont.replace("%%", "%"));
        } else if line.starts_with("; ") {
            comments += 1;
            last = None;
        } else {
            let eq = line
                .find('=')
                .expect("every other line is K=V (configparser)");
            let key = &line[..eq];
            assert!(!key.contains(':'), "no second delimiter");
            out.insert(key.to_string(), line[eq + 1..].replace("%%", "%"));
            last = Some(key.to_string());
        }
    }
    assert!(!text.contains('\r'), "configparser drops CR");
    (out, comments)
}

/// `$GITHUB_ENV` as the runner reads it on Linux: `NAME=value`, or
/// `NAME<<DELIM`, lines, `DELIM`.
fn decode_github(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let eq = line.find('=');
        let hd = line.find("<<");
        match (eq, hd) {
            (Some(e), h) if h.is_none_or(|h| e < h) => {
                out.insert(line[..e].to_string(), line[e + 1..].to_string());
            }
            (_, Some(h)) => {
                let delim = &line[h + 2..];
                let mut value: Vec<&str> = Vec::new();
                loop {
                    let l = lines.next().expect("delimiter found");
                    if l == delim {
                        break;
                    }
                    value.push(l);
                }
                out.insert(line[..h].to_string(), value.join("\n"));
            }
            _ => panic!("invalid github line"),
        }
    }
    out
}

/// `--env-file` as docker/cli reads it (the lines agentenv writes).
fn decode_docker(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let line = line.trim_start_matches(char::is_whitespace);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (k, v) = line.split_once('=').expect("=");
        assert!(!k.is_empty() && !k.contains([' ', '\t']), "docker refuses the name");
        out.insert(k.to_string(), v.to_string());
    }
    out
}

/// Every variable either read back exact or omitted (by name), and nothing
/// else read.
fn check_own(format: Format, view: &View, vars: &BTreeMap<String, String>) {
    let r = render_checked(format, view);
    let back = match format {
        Format::Github => decode_github(&r.text),
        _ => decode_docker(&r.text),
    };
    for (k, v) in vars {
        let omitted = r.omitted.iter().any(|o| o.name == k.as_bytes());
        match back.get(k) {
            Some(got) => {
                assert!(!omitted, "{format:?}: read back and omitted");
                assert_eq!(got, v, "{format:?} round trip");
            }
            None => assert!(omitted, "{format:?}: lost without a warning"),
        }
    }
    assert!(back.keys().all(|k| vars.contains_key(k)), "{format:?}: extra names");
}

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let parts: Vec<&str> = s.split('\0').collect();
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    for pair in parts.chunks(2) {
        if pair.len() == 2 {
            vars.insert(pair[0].to_string(), pair[1].to_string());
        }
    }
    let view = View::of(
        vars.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect::<Vec<_>>(),
    );

    let json = render(Format::Json, &view);
    assert!(json.is_ascii(), "json output is ASCII");
    let back: BTreeMap<String, String> = serde_json::from_str(&json).expect("json parses");
    assert_eq!(back, vars, "json round trip");

    let yaml = render(Format::Yaml, &view);
    if !vars.is_empty() {
        let back: BTreeMap<String, String> = serde_saphyr::from_str(&yaml).expect("yaml parses");
        assert_eq!(back, vars, "yaml round trip");
    }

    let export = render(Format::Export, &view);
    let expected: BTreeMap<String, String> = vars
        .iter()
        .filter(|(k, _)| is_ident(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if expected.is_empty() {
        assert_eq!(export, "\n");
    } else {
        assert_eq!(decode_export(&export), expected, "export round trip");
    }

    let fish = render(Format::Fish, &view);
    if expected.is_empty() {
        assert_eq!(fish, "\n");
    } else {
        assert_eq!(decode_fish(&fish), expected, "fish round trip");
    }

    let ini = render(Format::Ini, &view);
    let (back, comments) = decode_ini(&ini);
    assert_eq!(
        back.len() + comments,
        vars.len(),
        "each var: an entry or a comment"
    );
    for (k, v) in &back {
        assert_eq!(vars.get(k), Some(v), "ini round trip");
    }

    check_own(Format::Github, &view, &vars);
    check_own(Format::Docker, &view, &vars);
});
