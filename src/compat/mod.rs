//! How other runtimes see text and paths: each rule agentenv reproduces
//! from another language's standard library, written once.
//!
//! | module | runtime | what |
//! | --- | --- | --- |
//! | [`js`] | ECMAScript | whitespace (`\s`, `String.prototype.trim`) |
//! | [`python`] | CPython 3.11 | `str.isspace`, `str.strip`, `str.splitlines`' breaks, `str.isprintable`; `pathlib.PurePosixPath`, `posixpath.normpath`/`join`/`split`/`abspath` |
//! | [`go`] | Go | `unicode.IsSpace`, `strings.TrimSpace` on bytes, `path.Clean` |
//! | [`node`] | Node.js | `path.posix.normalize`/`resolve`/`join` |
//! | [`sh`] | POSIX shells (and the references' quoting functions) | single quoting, each rule named for whose it is |
//! | [`ident`] | POSIX shells (and every reference that copies them) | the name rule `[A-Za-z_][A-Za-z0-9_]*` |
//!
//! Everything here is *pure*: no I/O, no environment, no allocation beyond
//! the result. Paths are bytes and are never decoded. What touches the file
//! system on top of these rules (`realpath`, `shutil.which`, `~` expansion,
//! symlink containment) stays with its caller.
//!
//! Each rule is tested against its runtime where the runtime is installed
//! (`tests/it/compat.rs`: `node`, `python3`); Go is not installed, so the Go
//! rules are tested against the cases of the fullsend reference and the
//! rules `path.Clean` documents.

pub mod go;
pub mod ident;
pub mod js;
pub mod node;
pub mod python;
pub mod sh;

/// `bytes` without the leading and trailing encodings of `is_space`
/// characters. Bytes that do not decode as UTF-8 are never space and stop
/// the trim, as a decoder's replacement character does. Go's
/// `strings.TrimSpace` ([`go::trim_space`]) and ECMAScript's `trim()`
/// ([`js::trim`]) are this, each with its own space set.
pub fn trim_bytes(bytes: &[u8], is_space: impl Fn(char) -> bool) -> &[u8] {
    let mut first: Option<usize> = None;
    let mut end = 0;
    let mut off = 0;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        for (i, c) in valid.char_indices() {
            if !is_space(c) {
                first.get_or_insert(off + i);
                end = off + i + c.len_utf8();
            }
        }
        off += valid.len();
        let inv = chunk.invalid();
        if !inv.is_empty() {
            first.get_or_insert(off);
            off += inv.len();
            end = off;
        }
    }
    match first {
        Some(f) => &bytes[f..end],
        None => &bytes[..0],
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn trim_bytes_stops_at_what_does_not_decode() {
        fn t(b: &[u8]) -> &[u8] {
            super::trim_bytes(b, |c| c == ' ' || c == '\u{3000}')
        }
        assert_eq!(t(" \u{3000}a b\u{3000} ".as_bytes()), b"a b");
        assert_eq!(t(b" \xff a \xfe "), b"\xff a \xfe");
        // A space's own bytes, cut short, are not space.
        assert_eq!(t(b"\xe3\x80 a \xe3\x80"), b"\xe3\x80 a \xe3\x80");
        assert_eq!(t(b"   "), b"");
        assert_eq!(t(b""), b"");
    }
}
