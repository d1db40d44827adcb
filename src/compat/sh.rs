//! POSIX shell quoting: every single-quoting rule the crate writes, once,
//! each named for whose rule it is.
//!
//! | function | whose rule | for |
//! | --- | --- | --- |
//! | [`single_quote`] | POSIX `'…'` with each `'` as `'\''`, on bytes (fullsend's `export` lines; our own writers) | `harness` sandbox lines, the agent hook's prologue, `set`'s store lines, the shell hook |
//! | [`dotagents_quote`] | the reference's `_sh_quote`: as [`single_quote`] on text, plus CR as `'"$(printf '\r')"'` | `--format export` (and the masker's form of it) |
//! | [`shlex_quote`] | Python's `shlex.quote`: bare when every byte is in `[A-Za-z0-9_@%+=:,./-]`, else [`single_quote`] | `init`'s hook commands |
//! | [`bash_bytes_quote`] | the shell hook's: [`single_quote`] for UTF-8, else every byte as `$'\xHH'` | `hook bash` and `hook zsh` output |
//!
//! Everything here is *pure*.

/// Append `v` in POSIX single quotes to `out`: every byte literal, each `'`
/// as `'\''`. A shell reads it back exactly (bytes, not text; no NUL).
pub fn single_quote_into(out: &mut Vec<u8>, v: &[u8]) {
    out.reserve(v.len() + 2);
    out.push(b'\'');
    let mut rest = v;
    while let Some(i) = rest.iter().position(|&b| b == b'\'') {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(b"'\\''");
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'\'');
}

/// [`single_quote_into`] a new buffer.
pub fn single_quote(v: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() + 2);
    single_quote_into(&mut out, v);
    out
}

/// The reference's `_sh_quote` (dotagents' export format), appended to
/// `out`: `'` → `'\''`, CR → `'"$(printf '\r')"'` (so that a CR survives
/// a reader that strips it at the end of a line), everything else literal.
pub fn dotagents_quote(out: &mut String, value: &str) {
    out.push('\'');
    let mut rest = value;
    while let Some(i) = rest.find(['\'', '\r']) {
        out.push_str(&rest[..i]);
        out.push_str(if rest.as_bytes()[i] == b'\'' {
            "'\\''"
        } else {
            "'\"$(printf '\\r')\"'"
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
    out.push('\'');
}

/// Python's `shlex.quote`: `s` bare when it is not empty and every byte is
/// an ASCII letter, digit or one of `_@%+=:,./-`; else in single quotes.
pub fn shlex_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./-+:@%,=".contains(&b));
    if plain {
        s.to_string()
    } else {
        // `single_quote` of valid UTF-8 is valid UTF-8.
        String::from_utf8_lossy(&single_quote(s.as_bytes())).into_owned()
    }
}

/// The shell hook's word for bash and zsh: [`single_quote`] when `v` is
/// UTF-8, else every byte as `$'\xHH'` (so the script stays text).
pub fn bash_bytes_quote(v: &[u8]) -> String {
    match String::from_utf8(single_quote(v)) {
        Ok(s) => s,
        Err(_) => v.iter().map(|c| format!("$'\\x{c:02x}'")).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_quote_escapes_only_the_quote_and_keeps_bytes() {
        assert_eq!(single_quote(b""), b"''");
        assert_eq!(single_quote(b"a'b"), b"'a'\\''b'");
        assert_eq!(single_quote(b"''"), b"''\\'''\\'''");
        assert_eq!(single_quote(b"$x\r\n\xff"), b"'$x\r\n\xff'");
    }

    #[test]
    fn dotagents_quote_splices_cr() {
        let q = |v: &str| {
            let mut s = String::new();
            dotagents_quote(&mut s, v);
            s
        };
        assert_eq!(q(""), "''");
        assert_eq!(q("it's"), "'it'\\''s'");
        assert_eq!(q("a\rb"), "'a'\"$(printf '\\r')\"'b'");
        assert_eq!(q("é\n"), "'é\n'");
    }

    #[test]
    fn shlex_quote_is_bare_only_when_plain() {
        assert_eq!(shlex_quote("/usr/bin/agentenv"), "/usr/bin/agentenv");
        assert_eq!(shlex_quote("a=b,c@d%e+f:g"), "a=b,c@d%e+f:g");
        assert_eq!(shlex_quote(""), "''");
        assert_eq!(shlex_quote("a b"), "'a b'");
        assert_eq!(shlex_quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn bash_bytes_quote_falls_back_to_hex_for_non_utf8() {
        assert_eq!(bash_bytes_quote(b"a'b"), "'a'\\''b'");
        assert_eq!(bash_bytes_quote(b"a\xff"), "$'\\x61'$'\\xff'");
    }
}
