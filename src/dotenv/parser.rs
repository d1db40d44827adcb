//! The parser proper: one forward pass over the (newline-normalised) text.
//!
//! Values are sliced straight out of the input; a `String` is allocated
//! only for the final key and value of each entry, and a temporary one for
//! the rare multi-line raw text. Diagnostics name lines and keys, never any
//! part of a value (or of an ignored line, which may be a bare secret).

use super::scan::{
    count_lf, find_byte, find_byte2, hash_key, is_js_ws, trim, trim_end, ws_prefix_len,
};
use super::{Diagnostic, DiagnosticKind as K, Entry, Parsed};
use std::borrow::Cow;

/// CRLF and lone CR become LF (agent-bundle's decoding). Borrows when there is
/// no CR.
pub(super) fn normalise_newlines(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let Some(first) = find_byte(b, b'\r') else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut at = first;
    loop {
        out.push_str(&rest[..at]);
        out.push('\n');
        let skip = if rest.as_bytes().get(at + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[at + skip..];
        match find_byte(rest.as_bytes(), b'\r') {
            Some(n) => at = n,
            None => {
                out.push_str(rest);
                return Cow::Owned(out);
            }
        }
    }
}

/// Why a non-blank, non-comment line was ignored. The messages describe
/// the line's shape only.
fn ignored_reason(t: &str) -> &'static str {
    let b = t.as_bytes();
    match find_byte(b, b'=') {
        None => "ignored line: not an assignment (no '=')",
        Some(0) => "ignored line: no variable name before '='",
        Some(_) => {
            "ignored line: invalid variable name before '=' \
             (a name is [A-Za-z_][A-Za-z0-9_]*, optionally after 'export ')"
        }
    }
}

use crate::compat::ident;

/// `KEY<ws>*=` starting at `start` of the trimmed line: returns the key's
/// end and the index just after `=`.
#[inline]
fn key_eq_at(t: &str, start: usize) -> Option<(usize, usize)> {
    let b = t.as_bytes();
    if start >= b.len() || !ident::is_start(b[start]) {
        return None;
    }
    let mut i = start + 1;
    while i < b.len() && ident::is_continue(b[i]) {
        i += 1;
    }
    let key_end = i;
    if i < b.len() && b[i] != b'=' {
        i += ws_prefix_len(&t[i..]);
    }
    if i < b.len() && b[i] == b'=' {
        Some((key_end, i + 1))
    } else {
        None
    }
}

/// agent-bundle's assignment form on a trimmed line: the key and the untrimmed
/// rest after `=`.
#[inline]
fn match_assignment(t: &str) -> Option<(&str, &str)> {
    let b = t.as_bytes();
    if b.len() > 6 && &b[..6] == b"export" {
        let ws = ws_prefix_len(&t[6..]);
        if ws > 0 {
            if let Some((ke, eq)) = key_eq_at(t, 6 + ws) {
                return Some((&t[6 + ws..ke], &t[eq..]));
            }
        }
        // The optional prefix is given up: `export =1`, `exportX=1`.
    }
    key_eq_at(t, 0).map(|(ke, eq)| (&t[..ke], &t[eq..]))
}

/// agent-bundle's unquoted rule on already-trimmed raw text: cut at the first
/// whitespace immediately followed by `#`, then trim again.
#[inline]
fn unquoted(raw: &str) -> &str {
    let b = raw.as_bytes();
    let mut from = 1; // a `#` at index 0 has no whitespace before it
    while from < b.len() {
        let Some(p) = find_byte(&b[from..], b'#') else {
            break;
        };
        let p = from + p;
        let prev = b[p - 1];
        let ws = if prev < 0x80 {
            super::scan::is_ascii_js_ws(prev)
        } else {
            raw[..p].chars().next_back().is_some_and(is_js_ws)
        };
        if ws {
            return trim_end(&raw[..p]);
        }
        from = p + 1;
    }
    raw
}

/// First unskipped `q` in `b[from..]`, where a backslash skips the byte
/// after it (continuation bytes of UTF-8 never equal `q` or `\`).
#[inline]
fn find_close(b: &[u8], mut from: usize, q: u8) -> Option<usize> {
    while from < b.len() {
        let p = from + find_byte2(&b[from..], q, b'\\')?;
        if b[p] == q {
            return Some(p);
        }
        from = p + 2;
    }
    None
}

/// Decode the inner text of a double-quoted value: `\n` → LF, `\r` → CR,
/// `\"` → `"`, nothing else. (Equivalent to the reference's three
/// sequential replace-alls: none of them can create or consume a match of
/// another, since each backslash has one successor.)
fn decode_double(inner: &str) -> String {
    let b = inner.as_bytes();
    let Some(first) = find_byte(b, b'\\') else {
        return inner.to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut last = 0;
    let mut i = first;
    loop {
        let rep = match b.get(i + 1) {
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b'"') => Some('"'),
            _ => None,
        };
        let next_from = if let Some(c) = rep {
            out.push_str(&inner[last..i]);
            out.push(c);
            last = i + 2;
            i + 2
        } else {
            i + 1
        };
        match find_byte(&b[next_from.min(b.len())..], b'\\') {
            Some(n) => i = next_from + n,
            None => break,
        }
    }
    out.push_str(&inner[last..]);
    out
}

fn quote_name(q: u8) -> &'static str {
    match q {
        b'"' => "double quote",
        b'\'' => "single quote",
        _ => "backtick",
    }
}

fn quoted_name(q: u8) -> &'static str {
    match q {
        b'"' => "double-quoted",
        b'\'' => "single-quoted",
        _ => "backtick-quoted",
    }
}

/// How many of the swallowed lines would have been assignments.
/// How many lines of `tail` the grammar would read as assignments.
fn lost_assignments(tail: &str) -> usize {
    tail.split('\n')
        .filter(|l| match_assignment(trim(l)).is_some())
        .count()
}

/// The keys of the lines of `text` (inside a closed multi-line value)
/// that look like someone meant them as assignments: `export KEY=…`, or
/// an upper-case `KEY=…` whose value does not start with `=`. Stricter
/// than [`match_assignment`] so that the base64 lines of a PEM key
/// (`AbC123==`) or prose do not count.
fn assignment_like(text: &str) -> Vec<&str> {
    text.split('\n')
        .filter_map(|l| {
            let t = trim(l);
            let (k, rest) = match_assignment(t)?;
            let exported = !t.starts_with(k);
            let upper = k
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
                && k.bytes().any(|b| b.is_ascii_uppercase());
            ((exported || upper) && !rest.starts_with('=')).then_some(k)
        })
        .collect()
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `A, B, C` for `total` assignments of which `keys` are nameable: at most
/// 10 names, then `and N more`.
fn name_list(keys: &[&str], total: usize) -> String {
    const SHOWN: usize = 10;
    let shown: Vec<&str> = keys.iter().take(SHOWN).copied().collect();
    let mut s = shown.join(", ");
    let rest = total.saturating_sub(shown.len());
    if rest > 0 {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&format!("and {rest} more"));
    }
    s
}

/// One assignment as the pass sees it. Keys and most values borrow from
/// the text; owned strings for entries are made once, at the end.
struct Raw<'t> {
    key: &'t str,
    value: Cow<'t, str>,
    line: u32,
    /// Index of the next assignment of the same key (`u32::MAX`: none).
    next: u32,
    /// An earlier assignment of the same key exists.
    dup: bool,
}

/// At most this many diagnostics are kept per parse; the rest are counted
/// in one closing diagnostic. A broken file of any size then costs memory
/// proportional to its size with a small factor (a diagnostic is ~100
/// bytes, an ignored line can be 2).
pub(super) const MAX_DIAGNOSTICS: usize = 10_000;

struct Out<'t> {
    raws: Vec<Raw<'t>>,
    diagnostics: Vec<Diagnostic>,
    has_nul: bool,
    /// Diagnostics over the limit: how many, how many errors, first line.
    dropped: usize,
    dropped_errors: usize,
    dropped_first: u32,
}

impl<'t> Out<'t> {
    fn diag(&mut self, line: u32, kind: K, is_error: bool, message: String) {
        if self.diagnostics.len() >= MAX_DIAGNOSTICS {
            if self.dropped == 0 || line < self.dropped_first {
                self.dropped_first = line;
            }
            self.dropped += 1;
            self.dropped_errors += usize::from(is_error);
            return;
        }
        self.diagnostics.push(Diagnostic {
            line,
            message,
            is_error,
            kind,
        });
    }

    /// The warning for a quoted value of `key` (over `lines` lines) with
    /// text after its closing quote `q`.
    fn trailing(&mut self, line: u32, q: u8, key: &str, lines: usize) {
        let span = if lines > 1 {
            format!(" (spanning {lines} lines)")
        } else {
            String::new()
        };
        self.diag(
            line,
            K::Trailing,
            false,
            format!(
                "{} value of {key}{span} has text after the closing quote; \
                 the whole text is kept literally, quotes included",
                quoted_name(q)
            ),
        );
    }

    #[inline]
    fn put(&mut self, key: &'t str, mut value: Cow<'t, str>, line: u32) {
        if self.has_nul {
            if let Some(p) = find_byte(value.as_bytes(), 0) {
                value = match value {
                    Cow::Borrowed(s) => Cow::Borrowed(&s[..p]),
                    Cow::Owned(mut s) => {
                        s.truncate(p);
                        Cow::Owned(s)
                    }
                };
                self.diag(
                    line,
                    K::Nul,
                    false,
                    format!("value of {key} contains NUL; it is cut at the NUL"),
                );
            }
        }
        self.raws.push(Raw {
            key,
            value,
            line,
            next: u32::MAX,
            dup: false,
        });
    }

    /// Resolve duplicates (later value wins, first-occurrence order) and
    /// report each repeated key. Instead of probing a hash table per line
    /// (a cache miss each on big files), the (hash, index) pairs are
    /// radix-sorted once, which groups every key's assignments in order.
    fn finish(mut self) -> Parsed {
        let n = self.raws.len();
        let mut order: Vec<u64> = self
            .raws
            .iter()
            .enumerate()
            .map(|(i, r)| (u64::from(hash_key(r.key) as u32) << 32) | i as u64)
            .collect();
        sort_by_hash(&mut order);
        let mut g = 0;
        while g < n {
            let h = order[g] >> 32;
            let mut e = g + 1;
            while e < n && order[e] >> 32 == h {
                e += 1;
            }
            if e - g > 1 {
                self.link_group(&order[g..e]);
            }
            g = e;
        }
        let mut entries = Vec::with_capacity(n);
        for i in 0..n {
            if self.raws[i].dup {
                continue;
            }
            let mut last = i;
            while self.raws[last].next != u32::MAX {
                last = self.raws[last].next as usize;
            }
            let line = self.raws[last].line;
            let value = std::mem::take(&mut self.raws[last].value).into_owned();
            entries.push(Entry {
                key: self.raws[i].key.to_owned(),
                value,
                line,
            });
        }
        // Duplicate warnings were added last: put everything in line order
        // (stable, so one line's diagnostics keep their order).
        self.diagnostics.sort_by_key(|d| d.line);
        if self.dropped > 0 {
            self.diagnostics.push(Diagnostic {
                line: self.dropped_first,
                message: format!(
                    "too many diagnostics: {} more not listed ({} of them errors), \
                     the first of them on this line",
                    self.dropped, self.dropped_errors
                ),
                is_error: self.dropped_errors > 0,
                kind: K::TooMany,
            });
        }
        Parsed {
            entries,
            diagnostics: self.diagnostics,
        }
    }

    /// Assignments whose keys share 32 hash bits, in file order: chain
    /// equal keys and report each repeat.
    fn link_group(&mut self, group: &[u64]) {
        // (first index, last index so far) per distinct key in the group.
        let mut heads: Vec<(usize, usize)> = Vec::new();
        for &o in group {
            let i = (o & 0xffff_ffff) as usize;
            let key = self.raws[i].key;
            match heads.iter_mut().find(|(f, _)| self.raws[*f].key == key) {
                Some((_, prev)) => {
                    let p = *prev;
                    *prev = i;
                    self.raws[p].next = i as u32;
                    self.raws[i].dup = true;
                    let earlier = self.raws[p].line;
                    let line = self.raws[i].line;
                    self.diag(
                        line,
                        K::Duplicate,
                        false,
                        format!(
                            "duplicate key {key} (earlier on line {earlier}); the later value wins"
                        ),
                    );
                }
                None => heads.push((i, i)),
            }
        }
    }
}

/// Sort packed `(hash << 32) | index` values by hash, keeping index order
/// within a hash (LSD radix sort over the upper 32 bits; small inputs use
/// the standard sort, which gives the same order since the values are
/// distinct).
fn sort_by_hash(v: &mut Vec<u64>) {
    if v.len() < 1024 {
        v.sort_unstable();
        return;
    }
    let mut buf = vec![0u64; v.len()];
    for pass in 0..4 {
        let shift = 32 + pass * 8;
        let mut count = [0usize; 256];
        for &x in v.iter() {
            count[((x >> shift) & 0xff) as usize] += 1;
        }
        let mut sum = 0;
        for c in count.iter_mut() {
            let t = *c;
            *c = sum;
            sum += t;
        }
        for &x in v.iter() {
            let d = ((x >> shift) & 0xff) as usize;
            buf[count[d]] = x;
            count[d] += 1;
        }
        std::mem::swap(v, &mut buf);
    }
}

fn line_no(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub(super) fn parse(text: &str) -> super::Parsed {
    let norm = normalise_newlines(text);
    let text: &str = &norm;
    let b = text.as_bytes();
    let len = b.len();
    // Size the tables once: at most one entry per line, and an assignment
    // line takes at least 3 bytes (`A=` and LF).
    let est = (count_lf(b) + 1).min(len / 3 + 1);
    let mut out = Out {
        raws: Vec::with_capacity(est),
        diagnostics: Vec::new(),
        has_nul: find_byte(b, 0).is_some(),
        dropped: 0,
        dropped_errors: 0,
        dropped_first: 0,
    };
    let mut pos = 0usize; // start of the current line
    let mut line = 0usize; // 1-based number of the current line
    while pos < len {
        line += 1;
        let end = find_byte(&b[pos..], b'\n').map_or(len, |n| pos + n);
        let next = end + 1; // start of the following line (may be > len)
        let t = trim(&text[pos..end]);
        if t.is_empty() || t.as_bytes()[0] == b'#' {
            pos = next;
            continue;
        }
        let Some((key, rest)) = match_assignment(t) else {
            out.diag(
                line_no(line),
                K::Ignored,
                true,
                ignored_reason(t).to_owned(),
            );
            pos = next;
            continue;
        };
        let raw = trim(rest);
        let here = line_no(line);
        let q = raw.as_bytes().first().copied().unwrap_or(0);
        if q != b'"' && q != b'\'' && q != b'`' {
            out.put(key, Cow::Borrowed(unquoted(raw)), here);
            pos = next;
            continue;
        }
        let rb = raw.as_bytes();
        // Closing quote on the opening line.
        if let Some(c) = find_close(rb, 1, q) {
            let trailer = trim(&raw[c + 1..]);
            if trailer.is_empty() || trailer.as_bytes()[0] == b'#' {
                let inner = &raw[1..c];
                let v = if q == b'"' {
                    Cow::Owned(decode_double(inner))
                } else {
                    Cow::Borrowed(inner)
                };
                out.put(key, v, here);
            } else {
                out.trailing(here, q, key, 1);
                out.put(key, Cow::Borrowed(unquoted(raw)), here);
            }
            pos = next;
            continue;
        }
        // A backtick never spans lines: its line goes to the unquoted rule.
        if q == b'`' || next > len {
            out.diag(
                here,
                K::Unterminated,
                true,
                if q == b'`' {
                    format!(
                        "unterminated backtick for {key}: no closing quote on its line; \
                         the text is kept literally"
                    )
                } else {
                    format!(
                        "unterminated {} for {key} swallowed 0 lines \
                         (no closing quote before the end of the file)",
                        quote_name(q)
                    )
                },
            );
            out.put(key, Cow::Borrowed(unquoted(raw)), here);
            pos = next;
            continue;
        }
        // Multi-line: keep scanning the file from the next line on. The
        // joined text is `raw` + LF + the following lines as they are.
        match find_close(b, next, q) {
            Some(c) => {
                let close_end = find_byte(&b[c..], b'\n').map_or(len, |n| c + n);
                let consumed = count_lf(&b[next..c]) + 1;
                let trailer = trim(&text[c + 1..close_end]);
                // The closing quote was found, but lines that look like
                // assignments ended up inside the value: most likely a
                // missing quote on the first line, and those variables are
                // silently gone.
                let swallowed = assignment_like(&text[next..c]);
                if !swallowed.is_empty() {
                    out.diag(
                        here,
                        K::Swallowed,
                        true,
                        format!(
                            "{} value of {key} spans {} lines and swallowed {}; \
                             is a closing quote missing?",
                            quoted_name(q),
                            consumed + 1,
                            if swallowed.len() == 1 {
                                format!("1 line that looks like an assignment ({})", swallowed[0])
                            } else {
                                format!(
                                    "{} lines that look like assignments ({})",
                                    swallowed.len(),
                                    name_list(&swallowed, swallowed.len())
                                )
                            }
                        ),
                    );
                }
                if trailer.is_empty() || trailer.as_bytes()[0] == b'#' {
                    let mut inner = String::with_capacity(raw.len() + (c - next) + 1);
                    inner.push_str(&raw[1..]);
                    inner.push('\n');
                    inner.push_str(&text[next..c]);
                    let v = if q == b'"' {
                        decode_double(&inner)
                    } else {
                        inner
                    };
                    out.put(key, Cow::Owned(v), here);
                } else {
                    out.trailing(here, q, key, consumed + 1);
                    let mut joined = String::with_capacity(raw.len() + (close_end - next) + 1);
                    joined.push_str(raw);
                    joined.push('\n');
                    joined.push_str(&text[next..close_end]);
                    out.put(key, Cow::Owned(unquoted(trim(&joined)).to_owned()), here);
                }
                line += consumed;
                pos = close_end + 1;
            }
            None => {
                let tail = &text[next..];
                let swallowed = count_lf(tail.as_bytes())
                    + usize::from(!tail.is_empty() && !tail.ends_with('\n'));
                let lost = lost_assignments(tail);
                // Named only when they look like names someone meant
                // (`assignment_like`); the others are counted.
                let lost = if lost == 0 {
                    String::new()
                } else {
                    format!(
                        "; {lost} assignment{} on them lost: {}",
                        plural(lost),
                        name_list(&assignment_like(tail), lost)
                    )
                };
                out.diag(
                    here,
                    K::Unterminated,
                    true,
                    format!(
                        "unterminated {} for {key} swallowed {swallowed} line{} \
                         (the value runs to the end of the file{lost})",
                        quote_name(q),
                        plural(swallowed)
                    ),
                );
                let mut joined = String::with_capacity(raw.len() + tail.len() + 1);
                joined.push_str(raw);
                joined.push('\n');
                joined.push_str(tail);
                out.put(key, Cow::Owned(unquoted(trim(&joined)).to_owned()), here);
                pos = len;
            }
        }
    }
    out.finish()
}
