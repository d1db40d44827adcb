//! The masker (SPEC §14.2) on its own: each form against the real
//! encoders (python3's base64, binascii, urllib.parse.quote, json.dumps;
//! node's JSON.stringify and encodeURIComponent), and a property: any
//! chunking of random text with planted values masks exactly as the whole
//! text does.

mod support;

use agentenv::internals::mask::{forms, Form, MaskWriter, Masker};
use proptest::prelude::*;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;

/// Values rich in what the encoders care about: quotes, spaces, `&`, `+`,
/// `/`, backslashes, non-ASCII, control characters.
const VALUES: &[&str] = &[
    "plain-token-1234",
    "sk_live 'quoted' \"double\" & amp + plus / slash \\ back",
    "pässwörd-ünïcødé-€-😀-\u{7f}-\u{1}",
    "a?b=c&d=e#f%20g",
    "x",
    "abc",
    "tab\tand-more",
    "(paren)!*'star'",
    "ends with 1 byte=",
    "ends with 2 bytes==",
];

fn run_tool(program: &str, args: &[&str], input: &[u8]) -> Option<Vec<u8>> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .ok()?;
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{program} {args:?}");
    Some(out.stdout)
}

/// One line of output per value, from a python3 or node script reading
/// the values (as JSON strings) on stdin.
fn per_value(program: &str, script: &str) -> Option<Vec<Vec<u8>>> {
    support::which(program)?;
    let input = serde_json::to_vec(VALUES).unwrap();
    let flag = if program == "node" { "-e" } else { "-c" };
    let out = run_tool(program, &[flag, script], &input)?;
    Some(
        out.split(|&b| b == b'\n')
            .take(VALUES.len())
            .map(<[u8]>::to_vec)
            .collect(),
    )
}

fn has(forms: &[(Form, Vec<u8>)], f: Form, want: &[u8]) -> bool {
    forms.iter().any(|(g, b)| *g == f && b == want)
}

/// What the real encoder wrote is masked: each (sub)string given holds
/// one of the value's forms, and masking it leaves none of the value.
fn assert_masked(v: &str, encoded: &[u8], what: &str) {
    if v.len() < 4 {
        return;
    }
    let m = Masker::new([("V".to_string(), v.as_bytes().to_vec())]);
    let out = m.mask(encoded);
    assert!(
        out.windows(12).any(|w| w == b"[REDACTED:V]"),
        "{what} of {v:?}: {} not masked",
        String::from_utf8_lossy(encoded)
    );
}

#[test]
fn python_encodings_are_forms() {
    let script = r#"
import sys, json, base64, binascii, urllib.parse
vals = json.load(sys.stdin)
for v in vals:
    b = v.encode()
    parts = []
    for p in (b"", b"x", b"xy"):
        parts.append(base64.b64encode(p + b + b"Q").decode())
        parts.append(base64.b64encode(p + b).decode())
        parts.append(base64.urlsafe_b64encode(p + b).decode())
    parts.append(binascii.hexlify(b).decode())
    parts.append(b.hex().upper())
    parts.append(urllib.parse.quote(v, safe='-._~'))
    parts.append(urllib.parse.quote(v))
    parts.append(urllib.parse.quote(v, safe=''))
    parts.append(json.dumps(v))
    parts.append(json.dumps(v, ensure_ascii=False))
    print("\x00".join(parts))
"#;
    let Some(lines) = per_value("python3", script) else {
        support::skip("python_encodings_are_forms", "python3 not found");
        return;
    };
    for (v, line) in VALUES.iter().zip(&lines) {
        for (i, enc) in line.split(|&b| b == 0).enumerate() {
            assert_masked(v, enc, &format!("python encoding #{i}"));
        }
    }
    // Exactly: the quote() and json.dumps() strings (between the quotes).
    let v = VALUES[1];
    let f = forms(v.as_bytes());
    let parts: Vec<&[u8]> = lines[1].split(|&b| b == 0).collect();
    assert!(has(&f, Form::Percent, parts[11]));
    assert!(has(&f, Form::Percent, parts[12]));
    // ASCII only: json.dumps equals JSON.stringify, listed once as that.
    let dumps = parts[14];
    assert!(has(&f, Form::JsonStringify, &dumps[1..dumps.len() - 1]));
    let v = VALUES[2];
    let f = forms(v.as_bytes());
    let parts: Vec<&[u8]> = lines[2].split(|&b| b == 0).collect();
    let ascii = parts[14];
    assert!(has(&f, Form::JsonDumpsAscii, &ascii[1..ascii.len() - 1]));
    // ensure_ascii=False writes U+007F raw, as JSON.stringify does.
    let utf8 = parts[15];
    assert!(has(&f, Form::JsonStringify, &utf8[1..utf8.len() - 1]));
}

#[test]
fn node_encodings_are_forms() {
    let script = r#"
let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
  for (const v of JSON.parse(s)) {
    console.log([JSON.stringify(v), encodeURIComponent(v),
                 Buffer.from("x" + v).toString("base64url")].join("\u0000"));
  }
});
"#;
    let Some(lines) = per_value("node", script) else {
        support::skip("node_encodings_are_forms", "node not found");
        return;
    };
    for (v, line) in VALUES.iter().zip(&lines) {
        for (i, enc) in line.split(|&b| b == 0).enumerate() {
            assert_masked(v, enc, &format!("node encoding #{i}"));
        }
        if v.len() >= 4 {
            let f = forms(v.as_bytes());
            let js = line.split(|&b| b == 0).next().unwrap();
            let inner = &js[1..js.len() - 1];
            assert!(
                inner == v.as_bytes() || has(&f, Form::JsonStringify, inner),
                "{v:?}"
            );
        }
    }
}

#[test]
fn every_form_of_every_value_is_masked_and_named() {
    let pairs: Vec<(String, Vec<u8>)> = VALUES
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("V{i:02}"), v.as_bytes().to_vec()))
        .collect();
    let m = Masker::new(pairs.clone());
    for (name, v) in &pairs {
        for (form, bytes) in forms(v) {
            let mut line = b"<<".to_vec();
            line.extend_from_slice(&bytes);
            line.extend_from_slice(b">>\n");
            let out = m.mask(&line);
            assert_eq!(
                out,
                format!("<<[REDACTED:{name}]>>\n").into_bytes(),
                "{name} {form}"
            );
        }
    }
    // Short values: nothing.
    assert_eq!(m.mask(b"x abc"), b"x abc");
}

/// Random text (printable, line ends, a few invalid bytes) with planted
/// values and forms of values.
/// (name, value) pairs, a text, and the sizes of the writes.
type Case = (Vec<(String, Vec<u8>)>, Vec<u8>, Vec<usize>);

fn planted() -> impl Strategy<Value = Case> {
    let value = proptest::collection::vec(
        prop_oneof![
            6 => prop::sample::select(b"abcdefgh0123+/=%\\\"' ".to_vec()),
            1 => prop::sample::select(vec![b'\n', b'\r', 0xc3, 0xa9, 0xff]),
        ],
        3..14,
    );
    let values = proptest::collection::vec(value, 1..5);
    values.prop_flat_map(|values| {
        let pairs: Vec<(String, Vec<u8>)> = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("K{i}"), v))
            .collect();
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        for (_, v) in &pairs {
            pieces.push(v.clone());
            for (_, f) in forms(v) {
                pieces.push(f);
            }
        }
        let text = proptest::collection::vec(
            prop_oneof![
                3 => proptest::collection::vec(
                    prop::sample::select(b"abcdefgh0123+/=%\\\"' \n\r\xff".to_vec()),
                    0..12
                ),
                2 => prop::sample::select(pieces),
            ],
            0..24,
        )
        .prop_map(|ps| ps.concat());
        (
            Just(pairs),
            text,
            proptest::collection::vec(1usize..40, 1..20),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_masks_as_the_whole((pairs, text, sizes) in planted()) {
        let m = Arc::new(Masker::new(pairs.clone()));
        let whole = m.mask(&text);
        let mut w = MaskWriter::new(m.clone(), Vec::new());
        let mut rest = &text[..];
        let mut i = 0;
        while !rest.is_empty() {
            let n = sizes[i % sizes.len()].min(rest.len());
            w.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
            i += 1;
        }
        let streamed = w.finish().unwrap();
        prop_assert_eq!(&streamed, &whole);
        // And no planted form survives masking (a form could only remain
        // where it overlaps a longer, earlier match's replacement).
        for n in m.needles() {
            prop_assert!(
                !whole.windows(n.bytes.len()).any(|x| x == n.bytes),
                "{} ({}) left in output", n.name, n.form
            );
        }
    }
}
