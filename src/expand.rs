//! `${VAR}` expansion: exactly Go's `os.Expand`, as a pure function over a
//! lookup, plus the separate "every braced `${NAME}` must be set" scan
//! (`\$\{([^}]+)\}`) used by the harness validation.
//!
//! Semantics (those of modern Go): the input is scanned byte by byte; at each
//! `$` that is not the last byte a shell name is read:
//! - `${` + special char + `}` → that char (3 bytes);
//! - `${…}` → everything up to the first `}` verbatim; `${}` is bad syntax
//!   and the three bytes are dropped; `${` without a closing brace is bad
//!   syntax and only `${` is dropped;
//! - a special char (`* # $ @ ! ? - 0-9`) → that one char;
//! - else the longest run of ASCII `[A-Za-z0-9_]`; when empty the `$` is
//!   kept literally.
//!
//! There is no recursion: substituted text is never scanned again.

/// Go's `isShellSpecialVar`.
fn is_special(c: u8) -> bool {
    matches!(
        c,
        b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-' | b'0'..=b'9'
    )
}

// Go's `isAlphaNum` (ASCII only) is the name rule's continuing class.
use crate::compat::ident;

/// Go's `getShellName` on `s` (the text after a `$`, non-empty): the name
/// (empty for "none") and how many bytes it consumed.
fn shell_name(s: &str) -> (&str, usize) {
    let b = s.as_bytes();
    if b[0] == b'{' {
        if b.len() > 2 && is_special(b[1]) && b[2] == b'}' {
            return (&s[1..2], 3);
        }
        for i in 1..b.len() {
            if b[i] == b'}' {
                if i == 1 {
                    return ("", 2); // `${}`: bad syntax, eat it
                }
                return (&s[1..i], i + 1);
            }
        }
        return ("", 1); // `${` without `}`: eat `${`
    }
    if is_special(b[0]) {
        return (&s[0..1], 1);
    }
    let mut i = 0;
    while i < b.len() && ident::is_continue(b[i]) {
        i += 1;
    }
    (&s[..i], i)
}

/// Expand `$NAME` and `${NAME}` in `s` with `mapping`, exactly as Go's
/// `os.Expand`: `expand_bytes` on text (the tests and the fuzz target
/// check the rules through this form).
pub fn expand<F>(s: &str, mut mapping: F) -> String
where
    F: FnMut(&str) -> String,
{
    // Every piece is UTF-8 (text of `s` cut at ASCII bytes, or a
    // replacement), so the lossy branch is never taken.
    match String::from_utf8(expand_bytes(s, |n| mapping(n).into_bytes())) {
        Ok(t) => t,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// Go's `os.Expand` with byte-string values: the text of `s` is kept as its
/// UTF-8 bytes, each name is replaced by whatever bytes `mapping` gives
/// (host values need not be UTF-8).
pub fn expand_bytes<F>(s: &str, mut mapping: F) -> Vec<u8>
where
    F: FnMut(&str) -> Vec<u8>,
{
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    let mut j = 0;
    while j < b.len() {
        if b[j] == b'$' && j + 1 < b.len() {
            out.extend_from_slice(&b[i..j]);
            let (name, w) = shell_name(&s[j + 1..]);
            if name.is_empty() && w > 0 {
                // bad syntax: the consumed bytes are dropped
            } else if name.is_empty() {
                out.push(b'$');
            } else {
                out.extend_from_slice(&mapping(name));
            }
            j += w;
            i = j + 1;
        }
        j += 1;
    }
    if i < b.len() {
        out.extend_from_slice(&b[i..]);
    }
    out
}

/// Every name [`expand`] would look up in `s`, in order (braced or not).
pub fn expanded_names(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut names = Vec::new();
    let mut j = 0;
    while j < b.len() {
        if b[j] == b'$' && j + 1 < b.len() {
            let (name, w) = shell_name(&s[j + 1..]);
            if !name.is_empty() {
                names.push(name);
            }
            j += w;
        }
        j += 1;
    }
    names
}

/// The names of every `${NAME}` in `s` as the regex `\$\{([^}]+)\}` finds
/// them (leftmost, non-overlapping), in order. This is the validation scan,
/// which does not always agree with [`expand`] (`$${X}` checks `X`).
pub fn braced_names(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    let mut names = Vec::new();
    let mut p = 0;
    while p + 1 < b.len() {
        if b[p] == b'$' && b[p + 1] == b'{' {
            match b[p + 2..].iter().position(|&c| c == b'}') {
                Some(0) => p += 1,
                Some(off) => {
                    names.push(&s[p + 2..p + 2 + off]);
                    p = p + 2 + off + 1;
                }
                None => break,
            }
        } else {
            p += 1;
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_values_and_the_names_it_looks_up() {
        assert_eq!(expand_bytes("a${X}b", |_| vec![0xff]), b"a\xffb");
        assert_eq!(
            expanded_names("$A ${B} $$ ${} ${C:-d}"),
            ["A", "B", "$", "C:-d"]
        );
    }

    fn env(name: &str) -> String {
        match name {
            "FOO" => "foo".into(),
            "FOObar" => "FB".into(),
            "A" => "a".into(),
            "$" => "PID".into(),
            "1" => "one".into(),
            "-" => "dash".into(),
            "*" => "star".into(),
            "FOO:-x" => "weird".into(),
            "A${B" => "nested".into(),
            "X" => "$FOO".into(),
            "sp ace" => "s".into(),
            _ => String::new(),
        }
    }

    fn ex(s: &str) -> String {
        expand(s, env)
    }

    #[test]
    fn plain_text_is_unchanged() {
        assert_eq!(ex(""), "");
        assert_eq!(ex("hello"), "hello");
        assert_eq!(ex("héllo wörld"), "héllo wörld");
    }

    #[test]
    fn braced_and_unbraced() {
        assert_eq!(ex("${FOO}"), "foo");
        assert_eq!(ex("$FOO"), "foo");
        assert_eq!(ex("x${FOO}y"), "xfooy");
        assert_eq!(ex("$FOO-bar"), "foo-bar");
        assert_eq!(ex("$FOObar"), "FB");
        assert_eq!(ex("$FOO.bar"), "foo.bar");
        assert_eq!(ex("${NOPE}"), "");
        assert_eq!(ex("$NOPE/x"), "/x");
    }

    #[test]
    fn braces_take_everything_verbatim() {
        assert_eq!(ex("${FOO:-x}"), "weird");
        assert_eq!(ex("${A${B}"), "nested");
        assert_eq!(ex("${sp ace}"), "s");
        assert_eq!(ex("${A}}"), "a}");
    }

    #[test]
    fn empty_braces_are_dropped() {
        assert_eq!(ex("a${}b"), "ab");
        assert_eq!(ex("${}"), "");
    }

    #[test]
    fn unclosed_brace_drops_only_dollar_brace() {
        assert_eq!(ex("${FOO"), "FOO");
        assert_eq!(ex("a${FOO b"), "aFOO b");
        assert_eq!(ex("${"), "");
    }

    #[test]
    fn special_chars() {
        assert_eq!(ex("$$"), "PID");
        assert_eq!(ex("$1"), "one");
        assert_eq!(ex("$10"), "one0");
        assert_eq!(ex("$-x"), "dashx");
        assert_eq!(ex("${1}"), "one");
        assert_eq!(ex("${*}"), "star");
        assert_eq!(ex("${$}"), "PID");
        assert_eq!(ex("$#"), "");
        assert_eq!(ex("$@$!$?"), "");
        // `${1` (special without closing brace directly after) scans for `}`.
        assert_eq!(ex("${12}"), "");
        assert_eq!(ex("${1"), "1");
    }

    #[test]
    fn dollar_without_name_is_kept() {
        assert_eq!(ex("$ "), "$ ");
        assert_eq!(ex("$."), "$.");
        assert_eq!(ex("$}"), "$}");
        assert_eq!(ex("$("), "$(");
        assert_eq!(ex("$\""), "$\"");
        assert_eq!(ex("$é"), "$é");
        assert_eq!(ex("a$"), "a$");
        assert_eq!(ex("$"), "$");
        assert_eq!(ex("$$$"), "PID$");
    }

    #[test]
    fn no_recursion() {
        assert_eq!(ex("${X}"), "$FOO");
        assert_eq!(ex("$X$X"), "$FOO$FOO");
    }

    #[test]
    fn double_dollar_brace() {
        // `$$` is the variable `$`, then `{X}` literal.
        assert_eq!(ex("$${X}"), "PID{X}");
        assert_eq!(braced_names("$${X}"), vec!["X"]);
    }

    #[test]
    fn mapping_sees_names_in_order() {
        let mut seen = Vec::new();
        expand("$A ${B} $1 ${C:-d} $", |n| {
            seen.push(n.to_string());
            String::new()
        });
        assert_eq!(seen, ["A", "B", "1", "C:-d"]);
    }

    /// The table of Go's `os` package tests (`expandTests` / `testGetenv`).
    #[test]
    fn go_expand_test_table() {
        fn getenv(s: &str) -> String {
            match s {
                "*" => "all the args",
                "#" => "NARGS",
                "$" => "PID",
                "1" => "ARGUMENT1",
                "HOME" => "/usr/gopher",
                "H" => "(Value of H)",
                "home_1" => "/usr/foo",
                "_" => "underscore",
                _ => "",
            }
            .to_string()
        }
        let cases = [
            ("", ""),
            ("$*", "all the args"),
            ("$$", "PID"),
            ("${*}", "all the args"),
            ("$1", "ARGUMENT1"),
            ("${1}", "ARGUMENT1"),
            ("now is the time", "now is the time"),
            ("$HOME", "/usr/gopher"),
            ("$home_1", "/usr/foo"),
            ("${HOME}", "/usr/gopher"),
            ("${H}OME", "(Value of H)OME"),
            (
                "A$$$#$1$H$home_1*B",
                "APIDNARGSARGUMENT1(Value of H)/usr/foo*B",
            ),
            ("start$+middle$^end$", "start$+middle$^end$"),
            ("mixed$|bag$$$", "mixed$|bagPID$"),
            ("$", "$"),
            ("$}", "$}"),
            ("${", ""),
            ("${}", ""),
        ];
        for (input, want) in cases {
            assert_eq!(expand(input, getenv), want, "input {input:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics_and_text_without_dollar_is_unchanged(s in "\\PC{0,40}") {
            let _ = expand(&s, |n| n.to_string());
            let _ = braced_names(&s);
            if !s.contains('$') {
                proptest::prop_assert_eq!(expand(&s, |_| "X".into()), s);
            }
        }

        #[test]
        fn dollar_heavy_inputs(s in "[${}a-z_1*#@ .-]{0,30}") {
            // Every braced name the validation scan finds is a substring.
            for n in braced_names(&s) {
                proptest::prop_assert!(s.contains(n));
            }
            // With an empty mapping the output never grows.
            proptest::prop_assert!(expand(&s, |_| String::new()).len() <= s.len());
        }
    }

    #[test]
    fn braced_name_scan() {
        assert_eq!(braced_names("${A} $B ${C}"), vec!["A", "C"]);
        assert_eq!(braced_names("${}"), Vec::<&str>::new());
        assert_eq!(braced_names("${}${A}"), vec!["A"]);
        assert_eq!(braced_names("${A${B}"), vec!["A${B"]);
        assert_eq!(braced_names("${X:-on}"), vec!["X:-on"]);
        assert_eq!(braced_names("${OPEN"), Vec::<&str>::new());
        assert_eq!(braced_names("$"), Vec::<&str>::new());
    }
}
