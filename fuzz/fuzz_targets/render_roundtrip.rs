//! Rendering then reading back gives the same values: JSON through
//! serde_json, YAML through serde-saphyr, export through a decoder of the
//! POSIX single-quote forms the renderer emits. (The real shells and Python
//! readers are exercised by tests/roundtrip.rs.)
#![no_main]
use agentenv::render::{render, Format, View};
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
});
