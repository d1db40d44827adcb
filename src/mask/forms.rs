//! The forms of a value (docs/redact.md#keeping-secrets-out-of-the-agents-context):
//! the value itself, each line of a multi-line value, and the encodings a tool
//! is likely to print it in.
//!
//! The encoders are written here by hand (a few lines each, exact, no
//! dependency): base64 in both alphabets at the three byte offsets, hex,
//! percent-encoding, the JSON string escapes of `JSON.stringify` and
//! Python's `json.dumps`, and the export format's single quoting (that one
//! is the renderer's own [`crate::compat::sh::dotagents_quote`]). Each form is the
//! text *between* the delimiters a tool adds (quotes), so it matches
//! inside a longer line.

use std::collections::HashSet;

/// A value shorter than this (and a line of a multi-line value shorter
/// than this) is not masked: it would shred ordinary output (the one
/// constant `explain`'s "too short to mask" uses too).
pub const MIN_LEN: usize = crate::core::MIN_MASKED_LEN;

/// How a value appears in output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// The value itself.
    Raw,
    /// One line of a multi-line value (split at LF, CR and CRLF).
    Line,
    /// Standard base64, as it appears when the value starts at byte
    /// offset 0, 1 or 2 of a longer encoded input: the characters that
    /// depend on neighbouring bytes, and the padding, are left out. For
    /// a value at offset 0 also each line of the encoding wrapped at 76
    /// (`base64`) and 64 (openssl, PEM) columns.
    Base64,
    /// [`Form::Base64`] in the URL-safe alphabet (`-` and `_`).
    Base64Url,
    /// Hex, lower case (`xxd -p`, Python's `.hex()`), and each line of it
    /// wrapped at 60 columns (`xxd -p`).
    HexLower,
    /// Hex, upper case.
    HexUpper,
    /// Percent-encoding of every byte outside `A–Z a–z 0–9 - . _ ~`
    /// (upper-case hex digits). Two more spellings carry this form too,
    /// where they differ: Python's `urllib.parse.quote` with its default
    /// `safe='/'` (`/` kept), and JavaScript's `encodeURIComponent`
    /// (`! ' ( ) *` kept).
    Percent,
    /// The JSON string escape of `JSON.stringify` (between the quotes).
    JsonStringify,
    /// Python's `json.dumps` with `ensure_ascii=True` (the default):
    /// everything outside printable ASCII as `\uXXXX`, surrogate pairs
    /// above U+FFFF.
    JsonDumpsAscii,
    /// Python's `json.dumps` with `ensure_ascii=False`.
    JsonDumps,
    /// The export format's single-quoted form (between the outer quotes:
    /// `'` written as `'\''`, CR as `'"$(printf '\r')"'`).
    ShellSingleQuoted,
    /// Hex with a space between bytes, lower case, as `od -An -tx1` (and
    /// `hexdump -C` within one half-line) print it, 16 bytes a line: the
    /// value when it fits in a line, each 16-byte window of it (a full
    /// line, wherever in od's line the value starts; see [`OD_LINE`]),
    /// and its first and last 4 to 15 bytes (the pieces on the first and
    /// last line it spans).
    HexSpaced,
    /// [`Form::HexSpaced`] in upper case.
    HexSpacedUpper,
    /// Python's `repr` of the string (between the quotes), as
    /// `repr(os.environ)` prints each value: `\\`, `\n` `\r` `\t`,
    /// other control characters and non-printable characters as `\xhh`,
    /// `\uXXXX`, `\UXXXXXXXX`, bytes that are not UTF-8 as `\udcXX`
    /// (`surrogateescape`), and `'` as `\'` unless Python picks `"`
    /// quotes (the value holds `'` and no `"`).
    PythonRepr,
    /// Bash's `$'…'` quoting (between the quotes), as `set` and
    /// `declare -p` print a value holding a control character or a byte
    /// that is not printable: `\a \b \E \f \n \r \t \v \\ \'`,
    /// other bytes as `\ooo`; in a UTF-8 locale printable non-ASCII
    /// characters are kept, in the C locale every byte over 0x7f is
    /// `\ooo` (both spellings, where they differ).
    BashAnsiC,
    /// Bash's double-quoted form (between the quotes), as `declare -p`,
    /// `export -p` and `typeset -p` print a value holding `"`, `$`, `\`
    /// or a backtick (each written after a backslash), and as a hand-written
    /// store file holds it.
    BashDoubleQuoted,
    /// Bash's `printf %q` backslash form: a backslash before each of
    /// space, tab, `! " $ & ' ( ) * , ; < > ? [ \ ] ^` backtick `{ | }`,
    /// before `#` at the start, and before `~` at the start or after `:`
    /// or `=` (a value holding a control character is written `$'…'`:
    /// [`Form::BashAnsiC`]).
    BashPrintfQ,
    /// Go's `encoding/json` string escape (between the quotes), as
    /// `kubectl -o json`, `docker inspect` and `gh api` print it: as
    /// `JSON.stringify`, plus `<`, `>`, `&` as `\u003c`, `\u003e`,
    /// `\u0026`, U+2028 and U+2029 as `\u2028`, `\u2029`, bytes that are
    /// not UTF-8 as `\ufffd`.
    GoJson,
}

impl Form {
    /// A short stable name (`raw`, `line`, `base64`, `base64url`, `hex`,
    /// `HEX`, `percent`, `json`, `json-ascii`, `json-utf8`, `shell`,
    /// `hex-spaced`, `HEX-spaced`, `repr`, `ansi-c`, `bash-dq`, `printf-q`,
    /// `json-go`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Form::Raw => "raw",
            Form::Line => "line",
            Form::Base64 => "base64",
            Form::Base64Url => "base64url",
            Form::HexLower => "hex",
            Form::HexUpper => "HEX",
            Form::Percent => "percent",
            Form::JsonStringify => "json",
            Form::JsonDumpsAscii => "json-ascii",
            Form::JsonDumps => "json-utf8",
            Form::ShellSingleQuoted => "shell",
            Form::HexSpaced => "hex-spaced",
            Form::HexSpacedUpper => "HEX-spaced",
            Form::PythonRepr => "repr",
            Form::BashAnsiC => "ansi-c",
            Form::BashDoubleQuoted => "bash-dq",
            Form::BashPrintfQ => "printf-q",
            Form::GoJson => "json-go",
        }
    }
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// The lines of `value`, split at LF, CR and CRLF.
fn lines(value: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < value.len() {
        if is_line_end(value[i]) {
            out.push(&value[start..i]);
            if value[i] == b'\r' && value.get(i + 1) == Some(&b'\n') {
                i += 1;
            }
            start = i + 1;
        }
        i += 1;
    }
    out.push(&value[start..]);
    out
}

/// Every form of `value` to mask, deduplicated, in a fixed order: the
/// value itself ([`Form::Raw`], when it holds no line end), each line of
/// a multi-line value ([`Form::Line`], lines of at least [`MIN_LEN`]
/// bytes), then the encodings of the whole value and of each such line.
/// A form that equals an earlier one (or the value), holds a line end, or
/// is shorter than [`MIN_LEN`] is left out; a value shorter than
/// [`MIN_LEN`] has no forms at all.
pub fn forms(value: &[u8]) -> Vec<(Form, Vec<u8>)> {
    let mut out: Vec<(Form, Vec<u8>)> = Vec::new();
    if value.len() < MIN_LEN {
        return out;
    }
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut add = |out: &mut Vec<(Form, Vec<u8>)>, form: Form, bytes: Vec<u8>| {
        if bytes.len() >= MIN_LEN
            && !bytes.iter().any(|&b| is_line_end(b))
            && seen.insert(bytes.clone())
        {
            out.push((form, bytes));
        }
    };
    let multi = value.iter().any(|&b| is_line_end(b));
    let mut units: Vec<&[u8]> = vec![value];
    if multi {
        for l in lines(value) {
            if l.len() >= MIN_LEN {
                add(&mut out, Form::Line, l.to_vec());
                units.push(l);
            }
        }
    } else {
        add(&mut out, Form::Raw, value.to_vec());
    }
    for unit in units {
        for (form, bytes) in encodings(unit) {
            add(&mut out, form, bytes);
        }
    }
    out
}

/// The encoded forms of one unit (the value or one of its lines), before
/// deduplication.
fn encodings(v: &[u8]) -> Vec<(Form, Vec<u8>)> {
    let mut out = Vec::with_capacity(15);
    for offset in 0..3 {
        out.push((Form::Base64, base64_at(v, offset, STD)));
    }
    // Wrapped output of a value at the start of the input: `base64` writes
    // 76 columns, openssl and PEM 64, `xxd -p` 60 hex digits; each line
    // is registered (a line of at least 8 characters).
    let b64 = base64_at(v, 0, STD);
    for width in [76, 64] {
        wrapped(&mut out, Form::Base64, &b64, width);
    }
    let hex_lower = hex(v, b"0123456789abcdef");
    wrapped(&mut out, Form::HexLower, &hex_lower, 60);
    for offset in 0..3 {
        out.push((Form::Base64Url, base64_at(v, offset, URL)));
    }
    out.push((Form::HexLower, hex(v, b"0123456789abcdef")));
    out.push((Form::HexUpper, hex(v, b"0123456789ABCDEF")));
    out.push((Form::Percent, percent(v, b"")));
    out.push((Form::Percent, percent(v, b"/")));
    out.push((Form::Percent, percent(v, b"!'()*")));
    out.push((Form::JsonStringify, json(v, Json::Stringify)));
    out.push((Form::JsonDumpsAscii, json(v, Json::DumpsAscii)));
    out.push((Form::JsonDumps, json(v, Json::Dumps)));
    out.push((Form::GoJson, json(v, Json::Go)));
    out.push((Form::ShellSingleQuoted, shell(v)));
    out.push((Form::BashDoubleQuoted, bash_dq(v)));
    out.push((Form::BashPrintfQ, printf_q(v)));
    out.push((Form::PythonRepr, py_repr(v)));
    let control = v.iter().any(|&b| b < 0x20 || b == 0x7f);
    if control || v.utf8_chunks().any(|c| !c.invalid().is_empty()) {
        out.push((Form::BashAnsiC, ansi_c(v, true)));
    }
    if control || !v.is_ascii() {
        out.push((Form::BashAnsiC, ansi_c(v, false)));
    }
    od(&mut out, v, Form::HexSpaced, b"0123456789abcdef");
    od(&mut out, v, Form::HexSpacedUpper, b"0123456789ABCDEF");
    out
}

/// Bytes per line of `od -tx1` and `hexdump -C`.
pub const OD_LINE: usize = 16;

/// A unit (the value or one of its lines) of up to this many bytes has
/// every 16-byte window registered as a spaced-hex line; a longer one
/// only its first and last [`OD_LINE`] windows (the first and the last
/// full line wherever the value starts in od's line), which bounds the
/// needles per unit and case to 24 pieces and 32 windows.
pub const OD_ALL_WINDOWS_UP_TO: usize = 80;

/// The spaced-hex forms of `v` (see [`Form::HexSpaced`]). A value
/// starting at offset `o` of od's 16-byte line fills the rest of that
/// line with its first `16 - o` bytes, then whole lines (16-byte windows
/// starting at `16 - o + 16k`), then a last piece of at most 15 bytes; so
/// over all offsets: every prefix and suffix shorter than a line, and
/// every window. Pieces under [`MIN_LEN`] bytes are not registered.
fn od(out: &mut Vec<(Form, Vec<u8>)>, v: &[u8], form: Form, digits: &[u8; 16]) {
    let n = v.len();
    if n <= OD_LINE {
        out.push((form, spaced(v, digits)));
    }
    for k in MIN_LEN..OD_LINE.min(n) {
        out.push((form, spaced(&v[..k], digits)));
        out.push((form, spaced(&v[n - k..], digits)));
    }
    if n > OD_LINE {
        let starts = n - OD_LINE + 1;
        for j in 0..starts {
            if n <= OD_ALL_WINDOWS_UP_TO || j < OD_LINE || j + OD_LINE >= starts {
                out.push((form, spaced(&v[j..j + OD_LINE], digits)));
            }
        }
    }
}

/// Hex with one space between bytes.
fn spaced(v: &[u8], digits: &[u8; 16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 3);
    for (i, &b) in v.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.push(digits[usize::from(b >> 4)]);
        out.push(digits[usize::from(b & 15)]);
    }
    out
}

/// Whether Python's `str.isprintable` holds for a non-ASCII character:
/// an approximation that knows the Latin-1 controls, the spaces and
/// format characters most likely in a value, surrogates and private use
/// (not the unassigned code points, which Python's tables know).
fn py_printable(c: char) -> bool {
    let n = c as u32;
    !matches!(n,
        0x80..=0xa0
        | 0xad
        | 0x600..=0x605
        | 0x61c
        | 0x6dd
        | 0x70f
        | 0x1680
        | 0x180e
        | 0x2000..=0x200f
        | 0x2028..=0x202f
        | 0x205f..=0x206f
        | 0x3000
        | 0xd800..=0xf8ff
        | 0xfeff
        | 0xfff9..=0xfffb
        | 0xe0000..=0xe0fff
        | 0xf0000..)
}

/// Python's `repr` of `v` as `os.environ` decodes it (`surrogateescape`),
/// between the quotes.
fn py_repr(v: &[u8]) -> Vec<u8> {
    let quote = if v.contains(&b'\'') && !v.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = Vec::with_capacity(v.len() + 8);
    for chunk in v.utf8_chunks() {
        for c in chunk.valid().chars() {
            let n = c as u32;
            match c {
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                c if c as u32 == u32::from(quote) => out.extend_from_slice(&[b'\\', quote]),
                ' '..='~' => out.push(c as u8),
                c if !c.is_ascii() && py_printable(c) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                _ if n < 0x100 => out.extend_from_slice(format!("\\x{n:02x}").as_bytes()),
                _ if n < 0x10000 => out.extend_from_slice(format!("\\u{n:04x}").as_bytes()),
                _ => out.extend_from_slice(format!("\\U{n:08x}").as_bytes()),
            }
        }
        for &b in chunk.invalid() {
            out.extend_from_slice(format!("\\udc{b:02x}").as_bytes());
        }
    }
    out
}

/// Bash's `$'…'` quoting of `v` (between the quotes); `utf8`: the
/// locale's charset is UTF-8 (valid non-ASCII characters kept).
fn ansi_c(v: &[u8], utf8: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 8);
    let octal = |out: &mut Vec<u8>, b: u8| out.extend_from_slice(format!("\\{b:03o}").as_bytes());
    for chunk in v.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            if !c.is_ascii() {
                if utf8 {
                    out.extend_from_slice(bytes);
                } else {
                    for &b in bytes.iter() {
                        octal(&mut out, b);
                    }
                }
                continue;
            }
            let b = c as u8;
            match b {
                0x07 => out.extend_from_slice(b"\\a"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x1b => out.extend_from_slice(b"\\E"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x0b => out.extend_from_slice(b"\\v"),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\'' => out.extend_from_slice(b"\\'"),
                b if b < 0x20 || b == 0x7f => octal(&mut out, b),
                b => out.push(b),
            }
        }
        for &b in chunk.invalid() {
            octal(&mut out, b);
        }
    }
    out
}

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The base64 characters that depend only on `v` when `v` starts at byte
/// `offset` (0, 1 or 2, modulo 3) of a longer input: character `i` of an
/// encoding carries bits `6i .. 6i+6`, and `v` holds bits
/// `8·offset .. 8·(offset+len)`; the characters wholly inside are kept.
/// No padding (`=` only ends an encoding, where the last characters
/// depend on what follows).
pub(crate) fn base64_at(v: &[u8], offset: usize, alphabet: &[u8; 64]) -> Vec<u8> {
    let mut input = vec![0u8; offset];
    input.extend_from_slice(v);
    // Two more zero bytes so every character of interest is computed from
    // whole 3-byte groups; the ones they influence are cut off below.
    input.extend_from_slice(&[0, 0]);
    let first = (8 * offset).div_ceil(6);
    let end = 8 * (offset + v.len()) / 6;
    let mut chars = Vec::with_capacity(input.len() / 3 * 4 + 4);
    for g in input.chunks(3) {
        let b = [g[0], *g.get(1).unwrap_or(&0), *g.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            chars.push(alphabet[((n >> (18 - 6 * k)) & 63) as usize]);
        }
    }
    chars[first..end].to_vec()
}

/// The lines of `encoded` wrapped at `width`, when it is longer.
fn wrapped(out: &mut Vec<(Form, Vec<u8>)>, form: Form, encoded: &[u8], width: usize) {
    if encoded.len() > width {
        for piece in encoded.chunks(width) {
            if piece.len() >= 8 {
                out.push((form, piece.to_vec()));
            }
        }
    }
}

/// Plain base64 with `=` padding (for tests).
#[cfg(test)]
pub(crate) fn base64_padded(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for g in v.chunks(3) {
        let b = [g[0], *g.get(1).unwrap_or(&0), *g.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= g.len() {
                out.push(STD[((n >> (18 - 6 * k)) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

fn hex(v: &[u8], digits: &[u8; 16]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * 2);
    for &b in v {
        out.push(digits[usize::from(b >> 4)]);
        out.push(digits[usize::from(b & 15)]);
    }
    out
}

/// Percent-encoding; `also_safe`: bytes kept besides the unreserved ones.
fn percent(v: &[u8], also_safe: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(v.len() * 3);
    for &b in v {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || also_safe.contains(&b)
        {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Json {
    Stringify,
    DumpsAscii,
    Dumps,
    /// Go's `encoding/json` (HTML-safe).
    Go,
}

/// Bash's double quoting (`declare -p`), between the quotes.
fn bash_dq(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 8);
    for &b in v {
        if matches!(b, b'"' | b'$' | b'\\' | b'`') {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

/// Bash's `printf %q` of `v` as a whole argument (`sh_backslash_quote`
/// with its tilde flag).
fn printf_q(v: &[u8]) -> Vec<u8> {
    const SPECIAL: &[u8] = b" \t\n!\"$&'()*,;<>?[\\]^`{|}";
    let mut out = Vec::with_capacity(v.len() + 8);
    for (i, &b) in v.iter().enumerate() {
        let escape = SPECIAL.contains(&b)
            || (b == b'#' && i == 0)
            || (b == b'~' && (i == 0 || matches!(v[i - 1], b':' | b'=')));
        if escape {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

/// The JSON string escape of `v`, between the quotes.
///
/// Bytes that are not UTF-8 are written as each tool receives them from
/// the environment: node decodes with U+FFFD replacement; Python's
/// `os.environ` keeps them as lone surrogates (`surrogateescape`), which
/// `ensure_ascii` writes as `\udcXX` and `ensure_ascii=False` writes back
/// as the raw byte.
fn json(v: &[u8], kind: Json) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 8);
    let u4 = |out: &mut Vec<u8>, n: u32| {
        out.extend_from_slice(format!("\\u{n:04x}").as_bytes());
    };
    for chunk in v.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\u{8}' => out.extend_from_slice(b"\\b"),
                '\u{c}' => out.extend_from_slice(b"\\f"),
                c if (c as u32) < 0x20 => u4(&mut out, c as u32),
                '<' | '>' | '&' | '\u{2028}' | '\u{2029}' if kind == Json::Go => {
                    u4(&mut out, c as u32)
                }
                c if kind == Json::DumpsAscii && !(' '..='~').contains(&c) => {
                    let n = c as u32;
                    if n >= 0x10000 {
                        let m = n - 0x10000;
                        u4(&mut out, 0xd800 + (m >> 10));
                        u4(&mut out, 0xdc00 + (m & 0x3ff));
                    } else {
                        u4(&mut out, n);
                    }
                }
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        let bad = chunk.invalid();
        if !bad.is_empty() {
            match kind {
                Json::Stringify => out.extend_from_slice("\u{fffd}".as_bytes()),
                // One per byte (`utf8.DecodeRuneInString`'s size 1).
                Json::Go => {
                    for _ in bad {
                        out.extend_from_slice(b"\\ufffd");
                    }
                }
                Json::DumpsAscii => {
                    for &b in bad {
                        u4(&mut out, 0xdc00 + u32::from(b));
                    }
                }
                Json::Dumps => out.extend_from_slice(bad),
            }
        }
    }
    out
}

/// What the export format writes between the outer single quotes.
fn shell(v: &[u8]) -> Vec<u8> {
    let mut s = String::with_capacity(v.len() + 2);
    crate::compat::sh::dotagents_quote(&mut s, &crate::compat::python::lossy_text(v));
    let b = s.into_bytes();
    b[1..b.len() - 1].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(v: &[u8], f: Form) -> Vec<Vec<u8>> {
        forms(v)
            .into_iter()
            .filter(|(g, _)| *g == f)
            .map(|(_, b)| b)
            .collect()
    }

    #[test]
    fn short_values_have_no_forms() {
        assert!(forms(b"abc").is_empty());
        assert!(forms(b"").is_empty());
        assert!(!forms(b"abcd").is_empty());
    }

    #[test]
    fn names_are_stable() {
        let all = [
            (Form::Raw, "raw"),
            (Form::Line, "line"),
            (Form::Base64, "base64"),
            (Form::Base64Url, "base64url"),
            (Form::HexLower, "hex"),
            (Form::HexUpper, "HEX"),
            (Form::Percent, "percent"),
            (Form::JsonStringify, "json"),
            (Form::JsonDumpsAscii, "json-ascii"),
            (Form::JsonDumps, "json-utf8"),
            (Form::ShellSingleQuoted, "shell"),
            (Form::HexSpaced, "hex-spaced"),
            (Form::HexSpacedUpper, "HEX-spaced"),
            (Form::PythonRepr, "repr"),
            (Form::BashAnsiC, "ansi-c"),
            (Form::BashDoubleQuoted, "bash-dq"),
            (Form::BashPrintfQ, "printf-q"),
            (Form::GoJson, "json-go"),
        ];
        for (f, s) in all {
            assert_eq!(f.as_str(), s);
        }
    }

    #[test]
    fn base64_at_offsets_matches_real_encodings_with_prefixes() {
        // base64("hunter22") = aHVudGVyMjI=; the last char before '='
        // depends on the next byte.
        assert_eq!(base64_at(b"hunter22", 0, STD), b"aHVudGVyMj");
        // "x" + v, "xy" + v: the characters after the prefix's influence.
        for (prefix, off) in [(&b"x"[..], 1), (&b"xy"[..], 2), (&b"xyz"[..], 0)] {
            for suffix in [&b""[..], b"Q", b"QR", b"QRS"] {
                let v = b"hunter22 s3cr3t";
                let mut whole = prefix.to_vec();
                whole.extend_from_slice(v);
                whole.extend_from_slice(suffix);
                let enc = base64_padded(&whole);
                let f = base64_at(v, off, STD);
                assert!(
                    enc.windows(f.len()).any(|w| w == f),
                    "{} in {}",
                    String::from_utf8_lossy(&f),
                    String::from_utf8_lossy(&enc)
                );
            }
        }
    }

    #[test]
    fn base64_url_uses_its_alphabet() {
        let v = [0xfbu8, 0xff, 0xfe, 0xfb, 0xff, 0xfe];
        assert_eq!(base64_at(&v, 0, STD), b"+//++//+");
        assert_eq!(base64_at(&v, 0, URL), b"-__--__-");
        assert!(form(&v, Form::Base64Url).contains(&b"-__--__-".to_vec()));
    }

    #[test]
    fn hex_percent_json_shell() {
        let v = "a\"b\\c d&e+f/g'h\u{e9}\u{1f600}\t".as_bytes();
        assert!(form(v, Form::HexLower)[0].starts_with(b"6122625c6320642665"));
        assert_eq!(
            form(v, Form::Percent),
            vec![
                b"a%22b%5Cc%20d%26e%2Bf%2Fg%27h%C3%A9%F0%9F%98%80%09".to_vec(),
                b"a%22b%5Cc%20d%26e%2Bf/g%27h%C3%A9%F0%9F%98%80%09".to_vec(),
                b"a%22b%5Cc%20d%26e%2Bf%2Fg'h%C3%A9%F0%9F%98%80%09".to_vec(),
            ]
        );
        assert_eq!(
            form(v, Form::JsonStringify)[0],
            "a\\\"b\\\\c d&e+f/g'h\u{e9}\u{1f600}\\t".as_bytes()
        );
        assert_eq!(
            form(v, Form::JsonDumpsAscii)[0],
            b"a\\\"b\\\\c d&e+f/g'h\\u00e9\\ud83d\\ude00\\t"
        );
        // ensure_ascii=False equals JSON.stringify here: deduplicated.
        assert!(form(v, Form::JsonDumps).is_empty());
        assert_eq!(
            form(v, Form::ShellSingleQuoted)[0],
            "a\"b\\c d&e+f/g'\\''h\u{e9}\u{1f600}\t".as_bytes()
        );
    }

    #[test]
    fn forms_equal_to_the_value_are_left_out() {
        // Nothing to escape: json and shell equal the value; hex differs.
        let v = b"plainvalue";
        let got = forms(v);
        assert_eq!(got[0], (Form::Raw, v.to_vec()));
        assert!(got.iter().skip(1).all(|(_, b)| b != v));
        assert!(form(v, Form::JsonStringify).is_empty());
        assert!(form(v, Form::ShellSingleQuoted).is_empty());
        assert_eq!(form(v, Form::HexLower).len(), 1);
        let mut all: Vec<&Vec<u8>> = got.iter().map(|(_, b)| b).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), got.len(), "deduplicated");
    }

    #[test]
    fn multi_line_values_register_lines_and_single_line_encodings() {
        let v = b"first line\r\nsecond\rno\nthird line";
        let got = forms(v);
        assert!(form(v, Form::Raw).is_empty(), "raw spans a line end");
        assert_eq!(
            form(v, Form::Line),
            vec![
                b"first line".to_vec(),
                b"second".to_vec(),
                b"third line".to_vec()
            ]
        );
        // The whole value's JSON escape is one line.
        assert!(form(v, Form::JsonStringify)
            .contains(&b"first line\\r\\nsecond\\rno\\nthird line".to_vec()));
        assert!(got
            .iter()
            .all(|(_, b)| !b.contains(&b'\n') && !b.contains(&b'\r') && b.len() >= MIN_LEN));
        // The export form of a value with LF spans lines: only per line.
        assert!(form(v, Form::ShellSingleQuoted).is_empty());
        // A CR alone is written as $(printf '\r'): one line.
        assert_eq!(
            form(b"ab'c\rdefg", Form::ShellSingleQuoted),
            vec![
                b"ab'\\''c'\"$(printf '\\r')\"'defg".to_vec(),
                b"ab'\\''c".to_vec()
            ]
        );
    }

    #[test]
    fn invalid_utf8_in_json_forms() {
        let v = b"ab\xffcd\xe9";
        assert_eq!(
            form(v, Form::JsonDumpsAscii),
            vec![b"ab\\udcffcd\\udce9".to_vec()]
        );
        assert_eq!(
            form(v, Form::JsonStringify),
            vec!["ab\u{fffd}cd\u{fffd}".as_bytes().to_vec()]
        );
    }

    #[test]
    fn od_pieces_and_windows_are_bounded() {
        // No LF or CR: one unit.
        let v: Vec<u8> = (16u8..216).collect();
        let got = form(&v, Form::HexSpaced);
        // 12 prefixes, 12 suffixes, the first and last 16 windows.
        assert_eq!(got.len(), 12 + 12 + 32);
        assert!(got.contains(&b"10 11 12 13".to_vec()));
        assert!(got.contains(&b"d4 d5 d6 d7".to_vec()));
        let short = form(b"abcdefgh", Form::HexSpaced);
        assert_eq!(short[0], b"61 62 63 64 65 66 67 68");
        // Up to 80 bytes: every window.
        let v: Vec<u8> = (16u8..96).collect();
        assert_eq!(form(&v, Form::HexSpaced).len(), 12 + 12 + 65);
    }

    #[test]
    fn bash_double_quotes_printf_q_and_go_json() {
        let v = b"pw$R\"q\\b`t~#!{}";
        assert_eq!(
            form(v, Form::BashDoubleQuoted),
            vec![b"pw\\$R\\\"q\\\\b\\`t~#!{}".to_vec()]
        );
        assert_eq!(
            form(v, Form::BashPrintfQ),
            vec![b"pw\\$R\\\"q\\\\b\\`t~#\\!\\{\\}".to_vec()]
        );
        assert_eq!(
            form(b"~a:~b=~c#d e!f", Form::BashPrintfQ),
            vec![b"\\~a:\\~b=\\~c#d\\ e\\!f".to_vec()]
        );
        // Nothing to escape: the same as the value, left out.
        assert!(form(b"plainvalue", Form::BashDoubleQuoted).is_empty());
        assert_eq!(
            form(b"a&b<c>d\xff\xe2\x80\xa8", Form::GoJson),
            vec![b"a\\u0026b\\u003cc\\u003ed\\ufffd\\u2028".to_vec()]
        );
    }

    #[test]
    fn repr_and_ansi_c() {
        assert_eq!(
            form(b"it's\\x\x01", Form::PythonRepr),
            vec![b"it's\\\\x\\x01".to_vec()]
        );
        assert_eq!(
            form(b"it's \"x\"\t\x01\xff", Form::PythonRepr),
            vec![b"it\\'s \"x\"\\t\\x01\\udcff".to_vec()]
        );
        assert_eq!(
            form("a\tb'\x1b\u{e9}".as_bytes(), Form::BashAnsiC),
            vec![
                "a\\tb\\'\\E\u{e9}".as_bytes().to_vec(),
                b"a\\tb\\'\\E\\303\\251".to_vec()
            ]
        );
        // No control character: bash quotes with '…', no ansi-c form.
        assert!(form(b"plain'value", Form::BashAnsiC).is_empty());
    }
}
