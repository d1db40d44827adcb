//! The masker (docs/redact.md#keeping-secrets-out-of-the-agents-context) on its
//! own: each form against the real encoders (python3's base64, binascii,
//! urllib.parse.quote, json.dumps; node's JSON.stringify and
//! encodeURIComponent), and a property: any chunking of random text with
//! planted values masks exactly as the whole text does.

use crate::support;

use agentenv::internals::mask::{forms, Form, MaskWriter, Masker};
use proptest::prelude::*;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
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

/// Whether `form` of `v` is registered, or equals the value or one of
/// its other forms (a form equal to an earlier one is listed once).
fn registered(v: &[u8], want: &[u8]) -> bool {
    want == v || forms(v).iter().any(|(_, b)| b == want)
}

/// Values for the spaced-hex test: lengths around od's 16-byte line and
/// past the 80 bytes up to which every window is registered.
fn od_values() -> Vec<Vec<u8>> {
    let long = "k3y-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+/";
    let mut out: Vec<Vec<u8>> = [7, 12, 15, 16, 17, 31, 33, 48, 65, 80, 81]
        .iter()
        .map(|&n| long.as_bytes().iter().cycle().take(n).copied().collect())
        .collect();
    out.push("pässwörd-€-ünï-😀 \t\\'\"".as_bytes().to_vec());
    out.push(b"\xc7\xce\xcf\xd0\xda\xfe\xef\xab\xcd\xba".to_vec());
    out
}

fn hex_of(v: &[u8], upper: bool) -> String {
    v.iter()
        .map(|b| {
            if upper {
                format!("{b:02X}")
            } else {
                format!("{b:02x}")
            }
        })
        .collect()
}

/// `od -An -tx1` of the value at each of od's 16 line offsets (and a
/// suffix after it): after masking, the text with all whitespace removed
/// (the agentloop scanner's rule) holds no hex of the value; and for a
/// value of up to 80 bytes no line shows 4 of its bytes in a row (every
/// piece of 4 or more bytes on a line is masked). The same in upper case
/// (`tr a-f A-F`).
#[test]
fn od_spaced_hex_is_masked_at_every_offset() {
    if support::which("od").is_none() {
        support::skip("od_spaced_hex_is_masked_at_every_offset", "od not found");
        return;
    }
    for v in od_values() {
        let m = Masker::new([("V".to_string(), v.clone())]);
        for offset in 0..16 {
            let mut input = vec![b'!'; offset];
            input.extend_from_slice(&v);
            input.extend_from_slice(b"~~");
            let lower = run_tool("od", &["-An", "-tx1", "-v"], &input).unwrap();
            for upper in [false, true] {
                let od = if upper {
                    lower.to_ascii_uppercase()
                } else {
                    lower.clone()
                };
                let what = format!(
                    "{:?} at offset {offset} (upper: {upper})",
                    String::from_utf8_lossy(&v)
                );
                let out = String::from_utf8(m.mask(&od)).unwrap();
                assert!(out.contains("[REDACTED:V]"), "{what}: {out}");
                let squeezed: String = out.split_whitespace().collect();
                assert!(!squeezed.contains(&hex_of(&v, upper)), "{what}:\n{out}");
                assert!(
                    !squeezed.to_ascii_lowercase().contains(&hex_of(&v, false)),
                    "{what}:\n{out}"
                );
                if v.len() <= 80 {
                    for line in out.lines() {
                        for w in v.windows(4) {
                            let sp: Vec<String> = w.iter().map(|b| hex_of(&[*b], upper)).collect();
                            assert!(!line.contains(&sp.join(" ")), "{what}: {line}");
                        }
                    }
                }
            }
        }
    }
}

/// Python's `repr` of each value (as `repr(os.environ)` prints it, bytes
/// that are not UTF-8 through `surrogateescape`) is a form, and masking
/// the repr leaves only the quotes.
#[test]
fn python_repr_is_a_form() {
    if support::which("python3").is_none() {
        support::skip("python_repr_is_a_form", "python3 not found");
        return;
    }
    let script = r#"
import os, sys
for k in sorted(k for k in os.environ if k.startswith("RV_")):
    print(k, repr(os.environ[k]))
"#;
    let mut vals: Vec<Vec<u8>> = VALUES.iter().map(|v| v.as_bytes().to_vec()).collect();
    vals.extend([
        b"it's only single".to_vec(),
        b"both ' and \" quotes".to_vec(),
        b"ctl \x01\x1b\x7f\r\t and bad \xff\xfe utf8".to_vec(),
        "nbsp\u{a0} soft\u{ad} zwsp\u{200b} bom\u{feff} \u{e000} \u{1f600}"
            .as_bytes()
            .to_vec(),
        b"line one\nline two".to_vec(),
    ]);
    let mut cmd = Command::new("python3");
    cmd.args(["-c", script])
        .env("PYTHONIOENCODING", "utf-8:surrogateescape");
    for (i, v) in vals.iter().enumerate() {
        cmd.env(format!("RV_{i:02}"), std::ffi::OsStr::from_bytes(v));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success());
    let lines: Vec<&[u8]> = out.stdout.split(|&b| b == b'\n').collect();
    for (i, v) in vals.iter().enumerate() {
        if v.len() < 4 {
            continue;
        }
        let line = lines[i];
        let repr = &line[6..];
        let inner = &repr[1..repr.len() - 1];
        assert!(
            registered(v, inner),
            "repr of {:?}: {}",
            String::from_utf8_lossy(v),
            String::from_utf8_lossy(repr)
        );
        let m = Masker::new([("V".to_string(), v.clone())]);
        let masked = m.mask(repr);
        assert_eq!(
            masked.len(),
            "[REDACTED:V]".len() + 2,
            "{}",
            String::from_utf8_lossy(&masked)
        );
    }
}

/// Bash's `set` prints a value holding a control character (or a byte
/// not printable in the locale) as `$'…'`: in the C and the UTF-8
/// locale, the text between the quotes is a form.
#[test]
fn bash_set_ansi_c_is_a_form() {
    if support::which("bash").is_none() {
        support::skip("bash_set_ansi_c_is_a_form", "bash not found");
        return;
    }
    let vals: Vec<Vec<u8>> = vec![
        b"tab\there 'q' \\ back".to_vec(),
        b"bell\x07 bs\x08 esc\x1b ff\x0c vt\x0b del\x7f ctl\x01\x1f".to_vec(),
        b"multi\nline\r\nvalue".to_vec(),
        "ünï\tcødé 😀".as_bytes().to_vec(),
        b"bad \xff\xfe utf8".to_vec(),
        "only ünïcødé".as_bytes().to_vec(),
    ];
    for locale in ["C", "C.UTF-8"] {
        for v in &vals {
            let out = Command::new("bash")
                .args(["-c", "set | grep -a '^BV='"])
                .env("LC_ALL", locale)
                .env("BV", std::ffi::OsStr::from_bytes(v))
                .output()
                .unwrap();
            let line = out.stdout.strip_suffix(b"\n").unwrap_or(&out.stdout);
            let what = format!(
                "{locale} {:?}: {}",
                String::from_utf8_lossy(v),
                String::from_utf8_lossy(line)
            );
            if !line.starts_with(b"BV=$'") {
                // Not ansi-c quoted (the locale prints it as is or '…').
                assert!(!v.iter().any(|&b| b < 0x20), "{what}");
                continue;
            }
            let inner = &line[5..line.len() - 1];
            assert!(registered(v, inner), "{what}");
            let m = Masker::new([("V".to_string(), v.clone())]);
            assert_eq!(m.mask(line), b"BV=$'[REDACTED:V]'", "{what}");
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
            // A form two values share (the spaced hex of a common
            // prefix) is named by the first name in byte order.
            let owner = pairs
                .iter()
                .find(|(_, w)| forms(w).iter().any(|(_, b)| *b == bytes))
                .map(|(n, _)| n)
                .unwrap();
            assert_eq!(
                out,
                format!("<<[REDACTED:{owner}]>>\n").into_bytes(),
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
