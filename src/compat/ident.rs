//! The name rule `[A-Za-z_][A-Za-z0-9_]*`, matched against a whole name:
//! POSIX shell variable names, and what every reference that copies them
//! accepts (the dotenv grammar's keys, fullsend's `env.sandbox` keys and
//! `envfile` keys, the reference renderers' export names, Go's
//! `os.Expand` name characters).
//!
//! ASCII only: `é` is not a letter here. A trailing LF is not accepted
//! (Python's `re.match(r"…$")` would accept `"A\n"`).

/// May `b` start a name (`[A-Za-z_]`)?
#[inline]
pub fn is_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

/// May `b` continue a name (`[A-Za-z0-9_]`)? Go's `isAlphaNum`.
#[inline]
pub fn is_continue(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Is all of `name` one name? The empty name is not.
#[inline]
pub fn is_name(name: &[u8]) -> bool {
    match name.split_first() {
        Some((first, rest)) => is_start(*first) && rest.iter().all(|&b| is_continue(b)),
        None => false,
    }
}

/// The length of the leading run of [`is_continue`] bytes (always a char
/// boundary of UTF-8 text).
#[inline]
pub fn continue_len(s: &[u8]) -> usize {
    s.iter().position(|&b| !is_continue(b)).unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["A", "_", "_A1", "a_b_9", "PATH"] {
            assert!(is_name(ok.as_bytes()), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A.B", "A B", "A\n", "é", "A=", "$A"] {
            assert!(!is_name(bad.as_bytes()), "{bad:?}");
        }
        assert_eq!(continue_len(b"GH_TOKEN:-x"), 8);
        assert_eq!(continue_len(b"9a"), 2);
        assert_eq!(continue_len(b""), 0);
    }
}
