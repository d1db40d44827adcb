//! ECMAScript whitespace: the set `\s` matches and `String.prototype.trim`
//! strips (WhiteSpace plus LineTerminator). It includes U+FEFF and the line
//! terminators U+2028 and U+2029; it excludes U+0085 (NEL) and U+180E,
//! which Python and Go count as space.

/// One character of ECMAScript's whitespace set.
#[inline]
pub fn is_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The ASCII members of [`is_whitespace`], for byte loops.
#[inline]
pub fn is_ascii_whitespace(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// `trim()` on bytes that may not be UTF-8: leading and trailing encodings
/// of [`is_whitespace`] characters are stripped; an undecodable byte is
/// never whitespace and is kept ([`super::trim_bytes`]).
pub fn trim(bytes: &[u8]) -> &[u8] {
    super::trim_bytes(bytes, is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_members_agree() {
        for b in 0u8..0x80 {
            assert_eq!(is_ascii_whitespace(b), is_whitespace(b as char), "{b:#x}");
        }
    }

    #[test]
    fn trim_on_bytes() {
        assert_eq!(trim(b"  a b \t"), b"a b");
        assert_eq!(trim("\u{feff}\u{a0}x\u{3000}\u{2028}".as_bytes()), b"x");
        // U+0085 and U+180E are not whitespace in ECMAScript.
        assert_eq!(
            trim("\u{85}x\u{180e}".as_bytes()),
            "\u{85}x\u{180e}".as_bytes()
        );
    }
}
