//! Go's standard library: `unicode.IsSpace`, `strings.TrimSpace` on bytes,
//! `path.Clean` (which is also `filepath.Clean` on Unix).
//!
//! Go is not installed where the tests run: these rules are tested against
//! fullsend's cases (base location and cycle checks, the `--env-file` grammar,
//! the `host_files[i].dest` checks) and against the rules `path.Clean`
//! documents, not against a Go binary.

/// `unicode.IsSpace`: Unicode White_Space. Unlike ECMAScript it has U+0085
/// and no U+FEFF; unlike Python it has no U+001C–U+001F.
#[inline]
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}'
    )
}

/// `strings.TrimSpace` on bytes: [`is_space`] characters are stripped from
/// both ends; an undecodable byte (Go's `RuneError`) is not space and stops
/// the trim ([`super::trim_bytes`]).
pub fn trim_space(b: &[u8]) -> &[u8] {
    super::trim_bytes(b, is_space)
}

/// `path.Clean` on a slash path, as bytes: repeated slashes become one,
/// `.` elements go, each `..` removes the element before it (a `..` at the
/// start of a rooted path is dropped; at the start of a relative path it is
/// kept), a trailing slash goes; the empty result is `/` for a rooted path
/// and `.` otherwise.
pub fn clean(path: &[u8]) -> Vec<u8> {
    let rooted = path.first() == Some(&b'/');
    let mut parts: Vec<&[u8]> = Vec::new();
    for seg in path.split(|&b| b == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                if parts.last().is_some_and(|p| *p != b"..") {
                    parts.pop();
                } else if !rooted {
                    parts.push(seg);
                }
            }
            _ => parts.push(seg),
        }
    }
    let mut out = Vec::with_capacity(path.len() + 1);
    if rooted {
        out.push(b'/');
    }
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(p);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(p: &str) -> String {
        String::from_utf8(clean(p.as_bytes())).unwrap()
    }

    #[test]
    fn clean_follows_the_documented_rules() {
        // 1. repeated slashes become one
        assert_eq!(c("a//b"), "a/b");
        assert_eq!(c("///"), "/");
        assert_eq!(c("//a"), "/a");
        // 2. `.` elements go
        assert_eq!(c("./a/./b/."), "a/b");
        assert_eq!(c("."), ".");
        // 3. an inner `..` removes the element before it
        assert_eq!(c("a/b/../c"), "a/c");
        assert_eq!(c("a/.."), ".");
        assert_eq!(c("a/../.."), "..");
        assert_eq!(c("../a/../../b"), "../../b");
        // 4. a `..` that begins a rooted path goes
        assert_eq!(c("/.."), "/");
        assert_eq!(c("/../x"), "/x");
        assert_eq!(c("/a/../../b"), "/b");
        // a trailing slash goes; the empty path is `.`
        assert_eq!(c("/a/b/"), "/a/b");
        assert_eq!(c(""), ".");
        assert_eq!(c("/"), "/");
        // names are bytes, not syntax
        assert_eq!(c("/a/..x/...//"), "/a/..x/...");
    }

    #[test]
    fn clean_on_the_reference_cases() {
        // Base cycles: `harness/../harness/x.yaml` is canonicalised before the
        // cycle check, so it names the same file as `harness/x.yaml`.
        assert_eq!(c("/w/harness/../harness/x.yaml"), "/w/harness/x.yaml");
        assert_eq!(c("/w/harness/./x.yaml"), "/w/harness/x.yaml");
        // Base containment is on the cleaned absolute path.
        assert_eq!(c("/w/harness/../../etc/x.yaml"), "/etc/x.yaml");
        // `host_files[i].dest`: the reserved-path check is on the clean path.
        assert_eq!(c("/sandbox//workspace/./.env"), "/sandbox/workspace/.env");
        assert_eq!(c("/tmp/x/"), "/tmp/x");
    }

    #[test]
    fn trim_space_like_strings_trim_space() {
        // fullsend's `envfile.Load`: each `--env-file` line is trimmed with
        // `strings.TrimSpace`.
        assert_eq!(trim_space(b" \tK=v \r\n"), b"K=v");
        assert_eq!(trim_space("\u{85}\u{a0}K=v\u{3000}".as_bytes()), b"K=v");
        // U+FEFF is not space in Go (it is in ECMAScript).
        assert_eq!(trim_space("\u{feff}K".as_bytes()), "\u{feff}K".as_bytes());
    }

    #[test]
    fn is_space_is_white_space() {
        // Go's IsSpace is the White_Space property, which Rust's
        // char::is_whitespace also implements.
        for n in 0..=0x10ffffu32 {
            if let Some(ch) = char::from_u32(n) {
                assert_eq!(is_space(ch), ch.is_whitespace(), "{n:#x}");
            }
        }
    }
}
