//! Byte-level helpers for the dotenv grammar: trimming ECMAScript
//! whitespace, word-at-a-time byte search (std only, no `unsafe`) and a small
//! non-cryptographic hasher for the key index.

use std::hash::Hasher;

/// ECMAScript `\s`: the set every "trim" and every whitespace test of the
/// grammar uses (see [`crate::compat::js`]).
pub use crate::compat::js::{is_ascii_whitespace as is_ascii_js_ws, is_whitespace as is_js_ws};

/// Length in bytes of the whitespace at the start of `s`.
#[inline]
pub fn ws_prefix_len(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if is_ascii_js_ws(c) {
                i += 1;
                continue;
            }
            break;
        }
        // Non-ASCII: decode one char (s[i..] starts on a char boundary).
        match s[i..].chars().next() {
            Some(ch) if is_js_ws(ch) => i += ch.len_utf8(),
            _ => break,
        }
    }
    i
}

#[inline]
pub fn trim_start(s: &str) -> &str {
    &s[ws_prefix_len(s)..]
}

#[inline]
pub fn trim_end(s: &str) -> &str {
    let b = s.as_bytes();
    let mut end = b.len();
    while end > 0 {
        let c = b[end - 1];
        if c < 0x80 {
            if is_ascii_js_ws(c) {
                end -= 1;
                continue;
            }
            break;
        }
        match s[..end].chars().next_back() {
            Some(ch) if is_js_ws(ch) => end -= ch.len_utf8(),
            _ => break,
        }
    }
    &s[..end]
}

/// JavaScript `String.prototype.trim`.
#[inline]
pub fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// Does `s` end with a JS whitespace character?
#[inline]
pub fn ends_with_ws(s: &str) -> bool {
    s.chars().next_back().is_some_and(is_js_ws)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

#[inline(always)]
fn word(h: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&h[i..i + 8]);
    u64::from_le_bytes(a)
}

/// Non-zero where a byte of `w` is zero; the lowest set bit marks the first
/// zero byte exactly (borrows only create false hits above a true one).
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(LO) & !w & HI
}

/// First index of `n` in `h` (a std-only `memchr`).
#[inline]
pub fn find_byte(h: &[u8], n: u8) -> Option<usize> {
    let rep = LO.wrapping_mul(n as u64);
    let mut i = 0;
    while i + 8 <= h.len() {
        let z = zero_bytes(word(h, i) ^ rep);
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    h[i..].iter().position(|&b| b == n).map(|p| p + i)
}

/// First index of `a` or `b` in `h` (a std-only `memchr2`).
#[inline]
pub fn find_byte2(h: &[u8], a: u8, b: u8) -> Option<usize> {
    let ra = LO.wrapping_mul(a as u64);
    let rb = LO.wrapping_mul(b as u64);
    let mut i = 0;
    while i + 8 <= h.len() {
        let w = word(h, i);
        let z = zero_bytes(w ^ ra) | zero_bytes(w ^ rb);
        if z != 0 {
            return Some(i + (z.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    h[i..].iter().position(|&c| c == a || c == b).map(|p| p + i)
}

/// Number of LF bytes in `h` (word at a time, exact per byte).
#[inline]
pub fn count_lf(h: &[u8]) -> usize {
    const SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let rep = LO.wrapping_mul(b'\n' as u64);
    let mut n = 0usize;
    let mut chunks = h.chunks_exact(8);
    for c in &mut chunks {
        let mut a = [0u8; 8];
        a.copy_from_slice(c);
        let x = u64::from_le_bytes(a) ^ rep;
        // High bit set exactly in the bytes of `x` that are zero.
        let t = !(((x & SEVEN).wrapping_add(SEVEN)) | x | SEVEN);
        n += t.count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// FxHash-style hasher: fast on short ASCII keys (keys come from the
/// user's own files; nothing is iterated in hash order into output).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl FastHasher {
    #[inline(always)]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            self.add(u64::from_le_bytes(a));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(a) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // splitmix64's finaliser: the table indexes by the low bits, which
        // the multiply alone leaves depending on the low input bytes only.
        let mut h = self.0;
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^ (h >> 31)
    }
}

/// Hash of a key (FxHash-style mixing plus a finaliser).
#[inline]
pub fn hash_key(key: &str) -> u64 {
    let mut h = FastHasher::default();
    h.write(key.as_bytes());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn js_whitespace_set() {
        for c in [
            '\t', '\n', '\u{B}', '\u{C}', '\r', ' ', '\u{A0}', '\u{1680}', '\u{2000}', '\u{2005}',
            '\u{200A}', '\u{2028}', '\u{2029}', '\u{202F}', '\u{205F}', '\u{3000}', '\u{FEFF}',
        ] {
            assert!(is_js_ws(c), "{:?}", c);
        }
        // Rust's set differs: NEL is not JS whitespace, U+180E is in neither.
        for c in ['\u{85}', '\u{180E}', 'a', '#', '\u{200B}', '\u{1F}'] {
            assert!(!is_js_ws(c), "{:?}", c);
        }
    }

    #[test]
    fn trims_js_whitespace_only() {
        assert_eq!(trim("\u{FEFF} a b\u{3000}\t"), "a b");
        assert_eq!(trim("\u{85}a\u{85}"), "\u{85}a\u{85}");
        assert_eq!(trim("  "), "");
        assert_eq!(trim_start("\u{A0}x "), "x ");
        assert_eq!(trim_end("\u{A0}x\u{2029}"), "\u{A0}x");
    }

    #[test]
    fn byte_search_matches_naive() {
        let hay: Vec<u8> = (0..200u32).map(|i| (i * 37 % 251) as u8).collect();
        for n in 0..=255u8 {
            for start in 0..20 {
                let h = &hay[start..];
                assert_eq!(find_byte(h, n), h.iter().position(|&b| b == n));
                let m = n.wrapping_add(7);
                assert_eq!(
                    find_byte2(h, n, m),
                    h.iter().position(|&b| b == n || b == m)
                );
            }
        }
        assert_eq!(find_byte(b"", b'a'), None);
        let lf: Vec<u8> = (0..300u32)
            .map(|i| {
                if i % 7 == 0 || i % 11 == 0 {
                    b'\n'
                } else {
                    (i % 256) as u8
                }
            })
            .collect();
        for start in 0..20 {
            let h = &lf[start..];
            assert_eq!(count_lf(h), h.iter().filter(|&&b| b == b'\n').count());
        }
        assert_eq!(
            find_byte(b"\x80\x80\x80\x80\x80\x80\x80\x80\x0a", b'\n'),
            Some(8)
        );
        assert_eq!(find_byte(b"\x01\x00\x0a", b'\n'), Some(2));
    }
}
