//! The data formats: dotenv (for python-dotenv), json, ini (for
//! configparser) and yaml.

use super::pystr::{escape_with, has_surrounding_space, is_space, strip};
use super::{Lines, Prepared};
use crate::compat::ident;
use crate::compat::python::lossy_text;

/// The reference's `_dotenv_value`: bare unless the value needs quoting.
pub(crate) fn dotenv_value(out: &mut String, v: &str) {
    if v.is_empty() {
        return;
    }
    let first = v.chars().next().unwrap_or(' ');
    let last = v.chars().next_back().unwrap_or(' ');
    if v.contains(['$', '\r']) || matches!(first, '\'' | '"') || matches!(last, '\'' | '"') {
        out.push('\'');
        escape_with(
            out,
            v,
            |b| b == b'\\' || b == b'\'',
            |out, c| match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c => out.push(c),
            },
        );
        out.push('\'');
    } else if v.contains([' ', '\t', '#', '"', '\n']) || has_surrounding_space(v) {
        out.push('"');
        escape_with(
            out,
            v,
            |b| matches!(b, b'\\' | b'"' | b'\n'),
            |out, c| match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            },
        );
        out.push('"');
    } else {
        out.push_str(v);
    }
}

/// What python-dotenv does to a CR the reference writes raw: it opens a
/// file by path with universal newlines, so the CR comes back as LF.
pub(crate) const DOTENV_CR: &str = "holds a CR, written raw as the reference writes it; \
python-dotenv reading the file by path gives it back as LF. Read it with \
dotenv_values(stream=open(path, newline=''), interpolate=False), or use --format json";

/// The reference's dotenv format; `altered` gets each variable whose value
/// holds a CR (see [`DOTENV_CR`]).
pub(crate) fn dotenv(p: &Prepared, out: &mut Lines, altered: &mut Vec<super::Omission>) {
    for (k, v) in &p.assignments {
        if !ident::is_name(k) {
            continue;
        }
        if v.contains(&b'\r') {
            altered.push(super::Omission {
                name: k.to_vec(),
                reason: DOTENV_CR,
            });
        }
        let l = out.line();
        l.push_str(&lossy_text(k));
        l.push('=');
        dotenv_value(l, &lossy_text(v));
    }
}

/// One JSON string as Python's `json.dumps` (ensure_ascii) writes it.
pub(crate) fn json_string(out: &mut String, s: &[u8]) {
    out.push('"');
    for chunk in s.utf8_chunks() {
        escape_with(
            out,
            chunk.valid(),
            |b| !(b' '..=b'~').contains(&b) || b == b'"' || b == b'\\',
            |out, c| match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c => {
                    let mut units = [0u16; 2];
                    for u in c.encode_utf16(&mut units) {
                        push_u(out, *u as u32);
                    }
                }
            },
        );
        for &b in chunk.invalid() {
            push_u(out, 0xDC00 + b as u32);
        }
    }
    out.push('"');
}

fn push_u(out: &mut String, n: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[((n >> shift) & 0xf) as usize] as char);
    }
}

pub(crate) fn json(p: &Prepared, out: &mut String) {
    let entries = p.merged();
    if entries.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str("  ");
        json_string(out, k);
        out.push_str(": ");
        match v {
            Some(v) => json_string(out, v),
            None => out.push_str("null"),
        }
    }
    out.push_str("\n}");
}

/// A key configparser reads back as itself. A line break inside a name
/// (which passes the reference's check) would end the line early and make
/// the whole file unparsable (`ParsingError`), so it is refused too — a
/// deliberate difference found by fuzzing.
fn ini_key_ok(k: &str) -> bool {
    !k.is_empty()
        && strip(k) == k
        && !k.contains(['=', ':', '\n', '\r'])
        && !k.starts_with(['#', ';', '['])
}

/// The reference's `_ini_value`: `%` doubled, LF → LF + TAB; `false` when
/// configparser cannot hold the value verbatim.
fn ini_value(out: &mut String, v: &str) -> bool {
    if v.contains('\r') || has_surrounding_space(v) {
        return false;
    }
    for (i, line) in v.split('\n').enumerate() {
        // configparser strips every line of a value at both ends: trailing
        // whitespace on an inner line would be lost (the reference misses
        // this; we comment the value out instead of corrupting it).
        if line.chars().next_back().is_some_and(is_space) {
            return false;
        }
        if i > 0 && (line.chars().next().is_some_and(is_space) || line.starts_with(['#', ';'])) {
            return false;
        }
    }
    escape_with(
        out,
        v,
        |b| b == b'%' || b == b'\n',
        |out, c| match c {
            '%' => out.push_str("%%"),
            '\n' => out.push_str("\n\t"),
            c => out.push(c),
        },
    );
    true
}

pub(crate) fn ini(p: &Prepared, out: &mut Lines) {
    out.line().push_str("[env]");
    let mut value = String::new();
    for (k, v) in &p.assignments {
        let k = lossy_text(k);
        value.clear();
        let key_ok = ini_key_ok(&k);
        let l = out.line();
        if key_ok && ini_value(&mut value, &lossy_text(v)) {
            l.push_str(&k);
            l.push('=');
            l.push_str(&value);
        } else {
            l.push_str("; ");
            l.push_str(if key_ok { &k } else { "a var" });
            l.push_str(" omitted: not representable in INI");
        }
    }
}

/// A YAML double-quoted scalar, as the reference's `_yaml_value`.
fn yaml_string(out: &mut String, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    for chunk in s.utf8_chunks() {
        escape_with(
            out,
            chunk.valid(),
            |b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\',
            |out, c| match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => {
                    let n = c as usize;
                    out.push_str("\\x");
                    out.push(HEX[n >> 4] as char);
                    out.push(HEX[n & 0xf] as char);
                }
                '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => {
                    push_u(out, c as u32)
                }
                c => out.push(c),
            },
        );
        for &b in chunk.invalid() {
            push_u(out, 0xDC00 + b as u32);
        }
    }
    out.push('"');
}

/// A plain identifier that a YAML reader would type (bool/null). Numbers,
/// `~`, `.inf` and friends cannot be identifiers, so only the words remain.
fn yaml_typed_word(k: &[u8]) -> bool {
    const WORDS: &[&str] = &["true", "false", "yes", "no", "on", "off", "y", "n", "null"];
    WORDS.iter().any(|w| w.as_bytes().eq_ignore_ascii_case(k))
}

fn yaml_key(out: &mut String, k: &[u8]) {
    if ident::is_name(k) && !yaml_typed_word(k) {
        out.push_str(&lossy_text(k));
    } else {
        yaml_string(out, k);
    }
}

/// YAML allows an implicit (`key: value`) key of at most 1024 characters;
/// a longer one must be written as an explicit `? key` / `: value` pair, or
/// the document does not parse (PyYAML and serde-saphyr both refuse it). A
/// deliberate difference from the reference, found by fuzzing.
const YAML_IMPLICIT_KEY_MAX: usize = 1024;

pub(crate) fn yaml(p: &Prepared, out: &mut Lines) {
    let mut key = String::new();
    for (k, v) in p.merged() {
        key.clear();
        yaml_key(&mut key, k);
        let l = out.line();
        if key.chars().count() > YAML_IMPLICIT_KEY_MAX {
            l.push_str("? ");
            l.push_str(&key);
            l.push('\n');
        } else {
            l.push_str(&key);
        }
        l.push_str(": ");
        match v {
            Some(v) => yaml_string(l, v),
            None => l.push_str("null"),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::render::tests::view;
    use crate::render::{render, Format, View};
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn dotenv_rules() {
        let v = view(
            &[
                ("A", ""),
                ("B", "hello $world"),
                ("C", "it's local"),
                ("D", "--level user"),
                ("E", "pre"),
                ("F", "'q"),
                ("G", "q\""),
                ("H", "a\rb"),
                ("I", "a\\b\"c d"),
                ("J", "l1\nl2"),
                ("K", "\u{a0}x"),
                ("L", "a\u{2028}b!%'c"),
                ("M", "tab\there"),
                ("N", "a\\'b$"),
                ("O", "a\x01b\x7fc\u{85}"),
                ("P-Q", "dropped"),
            ],
            &["GONE"],
        );
        assert_eq!(
            render(Format::Dotenv, &v),
            "A=\nB='hello $world'\nC=\"it's local\"\nD=\"--level user\"\nE=pre\nF='\\'q'\nG='q\"'\n\
             H='a\rb'\nI=\"a\\\\b\\\"c d\"\nJ=\"l1\\nl2\"\nK=\"\u{a0}x\"\nL=a\u{2028}b!%'c\n\
             M=\"tab\there\"\nN='a\\\\\\'b$'\nO=\"a\x01b\x7fc\u{85}\"\n"
        );
    }

    #[test]
    fn yaml_quotes_a_name_with_a_trailing_newline() {
        // Deviation: the reference's `re.match(...$)` would leave "A\n" bare.
        let v = view(&[("A\n", "x")], &[]);
        assert_eq!(render(Format::Yaml, &v), "\"A\\n\": \"x\"\n");
    }

    #[test]
    fn json_escapes_to_ascii() {
        let v = view(
            &[
                ("A", "\"\\\n\r\t\u{8}\u{c}\u{1}\u{7f}é\u{2028}😀/"),
                ("B-é", "x"),
            ],
            &["C"],
        );
        assert_eq!(
            render(Format::Json, &v),
            "{\n  \"A\": \"\\\"\\\\\\n\\r\\t\\b\\f\\u0001\\u007f\\u00e9\\u2028\\ud83d\\ude00/\",\n  \"B-\\u00e9\": \"x\",\n  \"C\": null\n}\n"
        );
        assert_eq!(render(Format::Json, &View::default()), "{}\n");
    }

    #[test]
    fn json_and_yaml_print_undecodable_bytes_as_surrogates() {
        let v = View::of([(
            OsString::from_vec(b"K\xff".to_vec()),
            OsString::from_vec(b"a\x80".to_vec()),
        )]);
        assert_eq!(
            render(Format::Json, &v),
            "{\n  \"K\\udcff\": \"a\\udc80\"\n}\n"
        );
        assert_eq!(render(Format::Yaml, &v), "\"K\\udcff\": \"a\\udc80\"\n");
        assert_eq!(render(Format::Ini, &v), "[env]\nK?=a?\n");
    }

    #[test]
    fn json_removals_interleave() {
        let v = view(&[("A", "1"), ("C", "3")], &["B"]);
        assert_eq!(
            render(Format::Json, &v),
            "{\n  \"A\": \"1\",\n  \"B\": null,\n  \"C\": \"3\"\n}\n"
        );
    }

    #[test]
    fn ini_omits_values_configparser_would_strip() {
        let v = view(&[("A", "a  \nb"), ("B", "a\nb"), ("C", "x\u{1f}\ny")], &[]);
        assert_eq!(
            render(Format::Ini, &v),
            "[env]\n; A omitted: not representable in INI\nB=a\n\tb\n; C omitted: not representable in INI\n"
        );
    }

    #[test]
    fn yaml_writes_a_long_key_explicitly() {
        let long = "K".repeat(1030);
        let v = view(&[(long.as_str(), "v"), ("A", "1")], &[]);
        let y = render(Format::Yaml, &v);
        assert_eq!(y, format!("A: \"1\"\n? {long}\n: \"v\"\n"));
        let back: std::collections::BTreeMap<String, String> = serde_saphyr::from_str(&y).unwrap();
        assert_eq!(back.get(&long).map(String::as_str), Some("v"));
        // Exactly at the limit: still implicit.
        let edge = "K".repeat(1024);
        let y = render(Format::Yaml, &view(&[(edge.as_str(), "v")], &[]));
        assert_eq!(y, format!("{edge}: \"v\"\n"));
        let back: std::collections::BTreeMap<String, String> = serde_saphyr::from_str(&y).unwrap();
        assert_eq!(back.len(), 1);
    }

    #[test]
    fn ini_never_breaks_a_line_inside_a_name() {
        let v = view(&[("A\nB", "1"), ("C\rD", "2"), ("E", "3")], &[]);
        assert_eq!(
            render(Format::Ini, &v),
            "[env]\n; a var omitted: not representable in INI\n; a var omitted: not representable in INI\nE=3\n"
        );
    }

    #[test]
    fn ini_rules() {
        let v = view(
            &[
                ("ARGV", "--level user --agent user"),
                ("P", "100%"),
                ("M", "l1\nl2\nl3"),
                ("S", " lead"),
                ("T", "trail\u{85}"),
                ("CR", "a\rb"),
                ("C1", "l1\n l2"),
                ("C2", "l1\n#l2"),
                ("C3", "l1\n;l2"),
                ("C4", "l1\n\nl3"),
                ("E", ""),
                ("K=", "x"),
                ("K:", "x"),
                ("#K", "x"),
                (";K", "x"),
                ("[K", "x"),
                (" K", "x"),
                ("K]", "ok"),
            ],
            &["GONE"],
        );
        assert_eq!(
            render(Format::Ini, &v),
            "[env]\n; a var omitted: not representable in INI\n; a var omitted: not representable in INI\n\
             ; a var omitted: not representable in INI\nARGV=--level user --agent user\n; C1 omitted: not representable in INI\n\
             ; C2 omitted: not representable in INI\n; C3 omitted: not representable in INI\n\
             C4=l1\n\t\n\tl3\n; CR omitted: not representable in INI\nE=\n\
             ; a var omitted: not representable in INI\n; a var omitted: not representable in INI\n\
             K]=ok\nM=l1\n\tl2\n\tl3\nP=100%%\n; S omitted: not representable in INI\n\
             ; T omitted: not representable in INI\n; a var omitted: not representable in INI\n"
        );
        assert_eq!(render(Format::Ini, &View::default()), "[env]\n");
    }

    #[test]
    fn yaml_quotes_values_and_typed_keys() {
        let v = view(
            &[
                ("A", "yes"),
                ("Y", "1:30"),
                ("ON", "0x1F"),
                ("null", "~"),
                ("Null2", "x"),
                ("1X", "x"),
                ("A-B", "x"),
                ("x(86)", "x"),
                ("E", "\\\"\n\r\t\u{1}\u{7f}\u{85}\u{9f}\u{a0}\u{2028}\u{2029}\u{feff}\u{fffe}\u{ffff}’é😀"),
            ],
            &["B", "n"],
        );
        assert_eq!(
            render(Format::Yaml, &v),
            "\"1X\": \"x\"\nA: \"yes\"\n\"A-B\": \"x\"\nB: null\n\
             E: \"\\\\\\\"\\n\\r\\t\\x01\\x7f\\x85\\x9f\u{a0}\\u2028\\u2029\\ufeff\\ufffe\\uffff’é😀\"\n\
             Null2: \"x\"\n\"ON\": \"0x1F\"\n\"Y\": \"1:30\"\n\"n\": null\n\"null\": \"~\"\n\"x(86)\": \"x\"\n"
        );
    }
}
