//! How the reference sees an environment string, reproduced on bytes.
//!
//! The reference (Python) decodes every name and value as UTF-8 with
//! `surrogateescape`: each byte that is not part of a valid UTF-8 sequence
//! becomes the lone surrogate U+DC00+byte. Its renderers then work on those
//! code points, and the command encodes the text as UTF-8 with
//! `errors="replace"`, which turns each lone surrogate into `?`. JSON and YAML
//! escape surrogates themselves (`\udcXX`) before that step.
//!
//! This module gives the renderers the same view: `repr`, and the reference's sort order; the
//! decoding itself and Python's whitespace and printable sets come from
//! [`crate::compat::python`].

use std::cmp::Ordering;

pub(crate) use crate::compat::python::{has_surrounding_space, is_printable, is_space, strip};

/// The code points of `bytes` as the reference holds them, for ordering.
use crate::compat::python::decode_surrogateescape as code_points;

/// Sort items by name in the reference's order (code points of the
/// surrogateescape-decoded name). For valid UTF-8 that is byte order.
pub(crate) fn sort_by_name<T>(items: &mut [T], name: impl Fn(&T) -> &[u8]) {
    if items.iter().all(|t| std::str::from_utf8(name(t)).is_ok()) {
        items.sort_by(|a, b| name(a).cmp(name(b)));
    } else {
        items.sort_by_cached_key(|t| code_points(name(t)));
    }
}

/// Compare two names in the reference's order.
pub(crate) fn cmp_names(a: &[u8], b: &[u8]) -> Ordering {
    match (std::str::from_utf8(a), std::str::from_utf8(b)) {
        (Ok(_), Ok(_)) => a.cmp(b),
        _ => code_points(a).cmp(&code_points(b)),
    }
}

/// Python's `repr()` of a `str` (used in the `--format` error, as the
/// reference prints `%r`). Quote choice, escapes and the printable test
/// follow CPython 3.11.
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if is_printable(c) => out.push(c),
            c => {
                let n = c as u32;
                if n <= 0xff {
                    out.push_str(&format!("\\x{n:02x}"));
                } else if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04x}"));
                } else {
                    out.push_str(&format!("\\U{n:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// Copy `s` into `out`, handing each character that may need escaping to
/// `esc` (which pushes whatever it stands for, possibly the character
/// itself); runs of other characters are copied at once.
///
/// `hint(b)` says whether the byte `b` may start such a character. It must
/// be either a set of ASCII bytes, or such a set plus every byte ≥ 0x80 (so
/// that it never fires inside a multi-byte character alone).
#[inline]
pub(crate) fn escape_with(
    out: &mut String,
    s: &str,
    hint: impl Fn(u8) -> bool,
    mut esc: impl FnMut(&mut String, char),
) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if hint(bytes[i]) {
            out.push_str(&s[start..i]);
            let c = s[i..].chars().next().expect("a char starts here");
            esc(out, c);
            i += c.len_utf8();
            start = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecodable_bytes_become_question_marks_in_text() {
        assert_eq!(crate::compat::python::lossy_text(b"a\xffb"), "a?b");
        assert_eq!(crate::compat::python::lossy_text(b"\xe2\x82"), "??");
        assert_eq!(crate::compat::python::lossy_text(b"\xed\xa0\x80"), "???");
        assert_eq!(crate::compat::python::lossy_text("é".as_bytes()), "é");
    }

    #[test]
    fn surrogate_order_is_code_point_order() {
        // U+D7FF (ED 9F BF) < U+DC80 (undecodable 0x80) < U+E000 (EE 80 80).
        let mut v: Vec<&[u8]> = vec![b"\xee\x80\x80", b"\x80", b"\xed\x9f\xbf"];
        sort_by_name(&mut v, |x| x);
        assert_eq!(v, [&b"\xed\x9f\xbf"[..], b"\x80", b"\xee\x80\x80"]);
        assert_eq!(cmp_names(b"\x80", b"\xee\x80\x80"), Ordering::Less);
    }

    #[test]
    fn repr_like_python() {
        assert_eq!(py_repr("JSON"), "'JSON'");
        assert_eq!(py_repr("a'b"), "\"a'b\"");
        assert_eq!(py_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(
            py_repr("\u{85}\u{a0}\u{2028}é\n\\"),
            "'\\x85\\xa0\\u2028é\\n\\\\'"
        );
        assert_eq!(py_repr("\u{7f}\u{1}"), "'\\x7f\\x01'");
    }
}
