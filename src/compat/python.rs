//! CPython 3.11 (the reference interpreter): how `str` sees whitespace,
//! line breaks and printable characters, and the lexical path rules of
//! `pathlib.PurePosixPath` and `posixpath`.
//!
//! Text functions come in two shapes: on `char`/`&str` for decoded text,
//! and on code points (`u32`, `_codes`) for Python strings that can hold
//! lone surrogates (JSON read the way CPython reads it). Path functions
//! work on bytes and never decode.

mod printable;

/// The text Python prints for `bytes` decoded with `surrogateescape`
/// and encoded back with `errors="replace"`: valid UTF-8 as is, every
/// undecodable byte as `?`.
pub fn lossy_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len());
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for _ in chunk.invalid() {
                    out.push('?');
                }
            }
            std::borrow::Cow::Owned(out)
        }
    }
}

/// `bytes.decode("utf-8", "surrogateescape")`, one code point at a time:
/// `Ok` for each decoded character, `Err(b)` for each byte that is not part
/// of a valid UTF-8 sequence (Python holds it as the lone surrogate
/// U+DC00+`b`).
#[inline]
pub fn for_each_surrogateescaped(bytes: &[u8], mut f: impl FnMut(Result<char, u8>)) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            f(Ok(c));
        }
        for &b in chunk.invalid() {
            f(Err(b));
        }
    }
}

/// `bytes.decode("utf-8", "surrogateescape")` as code points.
pub fn decode_surrogateescape(bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(bytes.len());
    for_each_surrogateescaped(bytes, |c| {
        out.push(match c {
            Ok(c) => c as u32,
            Err(b) => 0xdc00 + b as u32,
        })
    });
    out
}

/// `str.isspace()` for one code point: bidirectional class WS, B or S, or
/// category Zs. Unlike ECMAScript it has U+001C–U+001F and U+0085 and no
/// U+FEFF.
#[inline]
pub fn is_space_code(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0d
            | 0x1c..=0x20
            | 0x85
            | 0xa0
            | 0x1680
            | 0x2000..=0x200a
            | 0x2028
            | 0x2029
            | 0x202f
            | 0x205f
            | 0x3000
    )
}

/// `str.isspace()` for one character.
#[inline]
pub fn is_space(c: char) -> bool {
    is_space_code(c as u32)
}

/// `s.strip()`.
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// `s.strip() != s`: the first or the last character is whitespace.
pub fn has_surrounding_space(s: &str) -> bool {
    s.chars().next().is_some_and(is_space) || s.chars().next_back().is_some_and(is_space)
}

/// `s.strip()` on code points.
pub fn strip_codes(t: &[u32]) -> &[u32] {
    let start = t.iter().position(|c| !is_space_code(*c)).unwrap_or(t.len());
    let end = t
        .iter()
        .rposition(|c| !is_space_code(*c))
        .map_or(start, |i| i + 1);
    &t[start..end.max(start)]
}

/// A code point `str.splitlines()` breaks at: LF, VT, FF, CR, U+001C–U+001E,
/// U+0085, U+2028, U+2029 (CR LF counts as one break).
#[inline]
pub fn is_line_break_code(c: u32) -> bool {
    matches!(
        c,
        0x0a | 0x0b | 0x0c | 0x0d | 0x1c | 0x1d | 0x1e | 0x85 | 0x2028 | 0x2029
    )
}

/// `s.splitlines()` on code points.
pub fn splitlines_codes(t: &[u32]) -> Vec<&[u32]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < t.len() {
        let c = t[i];
        if is_line_break_code(c) {
            out.push(&t[start..i]);
            if c == 0x0d && t.get(i + 1) == Some(&0x0a) {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    if start < t.len() {
        out.push(&t[start..]);
    }
    out
}

/// `str.isprintable()` for one character (Unicode 14.0.0, the tables of
/// the reference interpreter; see `printable.rs`).
pub fn is_printable(c: char) -> bool {
    let n = c as u32;
    if n < 0x100 {
        return !(n < 0x20 || (0x7f..=0xa0).contains(&n) || n == 0xad);
    }
    let table = printable::NOT_PRINTABLE;
    let i = table.partition_point(|&(_, hi)| hi < n);
    !(i < table.len() && table[i].0 <= n)
}

/// The root of a POSIX path as CPython splits it off: exactly two leading
/// slashes are kept as `//`, one or three-and-more become `/`.
fn root_len(p: &[u8]) -> usize {
    if p.starts_with(b"//") && !p.starts_with(b"///") {
        2
    } else if p.starts_with(b"/") {
        1
    } else {
        0
    }
}

/// `str(pathlib.PurePosixPath(p))`: empty and `.` parts dropped, `..` kept,
/// trailing slashes removed, a leading `//` (exactly two) kept; the empty
/// path is `.`.
pub fn pure_posix(p: &[u8]) -> Vec<u8> {
    let root = root_len(p);
    let mut out = vec![b'/'; root];
    let mut first = true;
    for part in p[root..].split(|c| *c == b'/') {
        if part.is_empty() || part == b"." {
            continue;
        }
        if !first {
            out.push(b'/');
        }
        first = false;
        out.extend_from_slice(part);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

/// `posixpath.normpath(p)`: like [`pure_posix`], and each `..` also removes
/// the part before it (dropped at the root, kept at the start of a
/// relative path).
pub fn normpath(p: &[u8]) -> Vec<u8> {
    if p.is_empty() {
        return b".".to_vec();
    }
    let initial = root_len(p);
    let mut comps: Vec<&[u8]> = Vec::new();
    for c in p.split(|c| *c == b'/') {
        if c.is_empty() || c == b"." {
            continue;
        }
        if c != b".."
            || (initial == 0 && comps.is_empty())
            || comps.last().is_some_and(|l| *l == b"..")
        {
            comps.push(c);
        } else if !comps.is_empty() {
            comps.pop();
        }
    }
    let mut out = vec![b'/'; initial];
    out.extend_from_slice(&comps.join(&b'/'));
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

/// `posixpath.join(a, b)` for two components: an absolute `b` replaces
/// `a`; otherwise a `/` is added unless `a` is empty or ends with one.
pub fn join(a: &[u8], b: &[u8]) -> Vec<u8> {
    if b.starts_with(b"/") {
        return b.to_vec();
    }
    let mut out = a.to_vec();
    if !(out.is_empty() || out.ends_with(b"/")) {
        out.push(b'/');
    }
    out.extend_from_slice(b);
    out
}

/// `posixpath.split(p)`: `(head, tail)` at the last `/`; trailing slashes
/// are removed from a head that is not all slashes.
pub fn split(p: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let i = p
        .iter()
        .rposition(|c| *c == b'/')
        .map(|i| i + 1)
        .unwrap_or(0);
    let (head, tail) = (&p[..i], &p[i..]);
    let mut head = head.to_vec();
    if !head.is_empty() && head.iter().any(|c| *c != b'/') {
        while head.ends_with(b"/") {
            head.pop();
        }
    }
    (head, tail.to_vec())
}

/// `os.path.abspath(p)` with `cwd` as the current directory:
/// `normpath(join(cwd, p))`.
pub fn abspath(p: &[u8], cwd: &[u8]) -> Vec<u8> {
    if p.starts_with(b"/") {
        normpath(p)
    } else {
        normpath(&join(cwd, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: Vec<u8>) -> String {
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn surrogateescape() {
        assert_eq!(decode_surrogateescape(b"a\xffb"), [0x61, 0xdcff, 0x62]);
        // A truncated sequence is one undecodable byte per byte.
        assert_eq!(decode_surrogateescape(b"\xe2\x82"), [0xdce2, 0xdc82]);
        assert_eq!(decode_surrogateescape("é".as_bytes()), [0xe9]);
    }

    #[test]
    fn whitespace() {
        for c in [
            ' ', '\t', '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1f}', '\u{85}', '\u{a0}',
            '\u{1680}', '\u{2000}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}',
            '\u{3000}',
        ] {
            assert!(is_space(c), "{c:?}");
        }
        for c in ['\u{180e}', '\u{200b}', '\u{feff}', 'a', '\u{0}'] {
            assert!(!is_space(c), "{c:?}");
        }
        assert_eq!(strip("\u{85} a \u{1c}"), "a");
        assert!(has_surrounding_space("a "));
        assert!(!has_surrounding_space("a\u{2028}b"));
        let t = [0x20, 0x61, 0xdcff, 0x85];
        assert_eq!(strip_codes(&t), &t[1..3]);
        assert_eq!(strip_codes(&[0x20, 0x20]), &[] as &[u32]);
    }

    #[test]
    fn splitlines() {
        let t: Vec<u32> = "a\r\nb\u{2028}c\u{1e}\n"
            .chars()
            .map(|c| c as u32)
            .collect();
        let lines: Vec<String> = splitlines_codes(&t)
            .iter()
            .map(|l| l.iter().map(|&c| char::from_u32(c).unwrap()).collect())
            .collect();
        assert_eq!(lines, ["a", "b", "c", ""]);
    }

    #[test]
    fn printable() {
        assert!(is_printable('a') && is_printable(' ') && is_printable('é'));
        assert!(!is_printable('\n') && !is_printable('\u{ad}') && !is_printable('\u{a0}'));
        assert!(!is_printable('\u{2028}') && !is_printable('\u{378}'));
        assert!(is_printable('😀'));
    }

    #[test]
    fn paths() {
        type Rule = fn(&[u8]) -> Vec<u8>;
        let cases: [(Rule, &[(&str, &str)]); 4] = [
            (
                pure_posix,
                &[("", "."), ("./a//b/./c/", "a/b/c"), ("/a/../b", "/a/../b")],
            ),
            (
                pure_posix,
                &[("//a/b", "//a/b"), ("///a", "/a"), ("/", "/")],
            ),
            (
                normpath,
                &[("", "."), ("/a/b/../c/.", "/a/c"), ("../a/..", "..")],
            ),
            (
                normpath,
                &[("/..", "/"), ("//x/../y", "//y"), ("a/../..", "..")],
            ),
        ];
        for (rule, pairs) in cases {
            for (given, want) in pairs {
                assert_eq!(s(rule(given.as_bytes())), *want, "{given:?}");
            }
        }
        assert_eq!(s(join(b"a/", b"b")), "a/b");
        assert_eq!(s(join(b"a", b"/b")), "/b");
        assert_eq!(s(join(b"", b"b")), "b");
        assert_eq!(split(b"/a//b"), (b"/a".to_vec(), b"b".to_vec()));
        assert_eq!(split(b"//b"), (b"//".to_vec(), b"b".to_vec()));
        assert_eq!(s(abspath(b"x/../y", b"/w")), "/w/y");
        assert_eq!(s(abspath(b"/a/./b", b"/w")), "/a/b");
    }
}
