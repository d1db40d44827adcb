//! The order of the report's `applied` names: the reference sorts with JS
//! `localeCompare` (ICU root collation), not by bytes. For the names the
//! grammar can produce (`[A-Za-z0-9_]`) that is:
//!
//! 1. primary: `_` < `0` … `9` < `a`/`A` … `z`/`Z`, case ignored; a prefix
//!    sorts first;
//! 2. tertiary: at the first position where the case differs, lowercase
//!    sorts before uppercase.
//!
//! Other characters (a library caller may pass any name) are ranked after
//! those, by code point, so the order stays total; the final tie-break is
//! byte order.

use std::cmp::Ordering;

fn primary(c: char) -> (u32, u32) {
    match c {
        '_' => (0, 0),
        '0'..='9' => (1, c as u32 - '0' as u32),
        'a'..='z' => (2, c as u32 - 'a' as u32),
        'A'..='Z' => (2, c as u32 - 'A' as u32),
        _ => (3, c as u32),
    }
}

/// Compare two names as the reference's `localeCompare` does (see the
/// module docs).
pub fn compare_names(a: &str, b: &str) -> Ordering {
    let pa = a.chars().map(primary);
    let pb = b.chars().map(primary);
    match pa.cmp(pb) {
        Ordering::Equal => {}
        o => return o,
    }
    for (x, y) in a.chars().zip(b.chars()) {
        let (xl, yl) = (x.is_ascii_lowercase(), y.is_ascii_lowercase());
        let (xu, yu) = (x.is_ascii_uppercase(), y.is_ascii_uppercase());
        if xl && yu {
            return Ordering::Less;
        }
        if xu && yl {
            return Ordering::Greater;
        }
    }
    a.cmp(b)
}

/// Sort names in place with [`compare_names`].
pub fn sort_names(names: &mut [String]) {
    names.sort_by(|a, b| compare_names(a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(v: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        sort_names(&mut v);
        v
    }

    fn check(expected: &[&str]) {
        // Every rotation and the reverse of the expected order sort back to it.
        let n = expected.len();
        for r in 0..n {
            let mut input: Vec<&str> = expected.to_vec();
            input.rotate_left(r);
            assert_eq!(sorted(&input), expected, "rotation {r}");
            input.reverse();
            assert_eq!(sorted(&input), expected, "reversed rotation {r}");
        }
    }

    #[test]
    fn reference_examples() {
        check(&["_Z", "a", "A", "A_B", "A1", "AB", "b"]);
        check(&["foo", "Foo", "FOO"]);
        check(&["aA", "Aa"]);
        check(&["a_b", "A_B", "A0"]);
    }

    #[test]
    fn underscore_then_digits_then_letters() {
        check(&["_", "__", "_0", "0", "9", "a", "z", "Z"]);
        check(&["A", "A_", "A0", "A9", "AA"]);
    }

    #[test]
    fn prefix_first_before_case() {
        // Primary difference (length) beats a tertiary (case) one.
        check(&["ab", "AB", "abc"]);
        check(&["B", "b_"]);
    }

    #[test]
    fn not_byte_order() {
        let v = sorted(&["Z", "_", "a"]);
        assert_eq!(v, vec!["_", "a", "Z"]);
        let mut bytes = v.clone();
        bytes.sort();
        assert_ne!(v, bytes);
    }

    #[test]
    fn total_on_other_characters() {
        assert_eq!(compare_names("é", "é"), Ordering::Equal);
        assert_eq!(compare_names("z", "é"), Ordering::Less);
        assert_eq!(compare_names("a", "a"), Ordering::Equal);
    }
}
