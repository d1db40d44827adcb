//! The masker (docs/redact.md#keeping-secrets-out-of-the-agents-context): replace,
//! in a byte stream, every form of a sensitive value with `[REDACTED:NAME]`.
//!
//! - [`forms`] lists the forms of one value ([`Form`]).
//! - [`Masker`] holds the needles of a set of `(name, value)` pairs and
//!   masks a whole buffer, leftmost-longest: a sampled q-gram search over
//!   the long needles (`search.rs`, whose doc gives the invariant), the
//!   `aho-corasick` crate for needles of 4–7 bytes.
//! - [`MaskWriter`] does the same on a stream: bytes in, bytes out; a
//!   complete line is released as soon as it ends, the tail of an
//!   unfinished line as soon as further bytes decide it (or on
//!   [`MaskWriter::release_pending`], which a [`Pump`] calls after
//!   [`IDLE`] without new bytes).
//! - [`Pump`] reads several descriptors through their writers in one
//!   `poll` loop and drains them once the producer is done
//!   ([`DRAIN_IDLE`]): `exec --redact`, `redact`, the per-command helper
//!   and the daemon.
//!
//! Byte-level throughout: invalid UTF-8 and binary data pass unchanged
//! outside masked spans. No needle holds a line end (CR or LF), so no
//! match spans one — the invariant the streaming rules rest on.
//!
//! The module does no printing and holds no value beyond the masker's own
//! needles.

mod forms;
mod search;
mod stream;

#[cfg(test)]
pub(crate) use forms::base64_padded;
pub use forms::{forms, Form, MIN_LEN};
pub use stream::{pump, MaskWriter, Pump, DRAIN_IDLE, IDLE};
pub(crate) use stream::{FdOut, PIPE_SIZE};

/// One string to mask: the variable it belongs to, its form and its
/// bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needle {
    /// The variable (the first in byte order among those holding the same
    /// needle).
    pub name: String,
    /// Which form of the variable's value it is.
    pub form: Form,
    /// The bytes searched for.
    pub bytes: Vec<u8>,
}

/// One match: which needle, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Index into [`Masker::needles`].
    pub needle: usize,
    /// First byte of the match.
    pub start: usize,
    /// One past its last byte.
    pub end: usize,
}

/// The needles of a set of values, ready to search.
pub struct Masker {
    needles: Vec<Needle>,
    /// `[REDACTED:NAME]` per needle.
    replacement: Vec<Vec<u8>>,
    /// The search over every needle ([`search`]).
    search: search::Search,
    /// Needle indices in byte order of their bytes (prefix look-ups).
    sorted: Vec<usize>,
    /// Bytes a needle starts with.
    first: [bool; 256],
    /// The longest needle's length.
    max_len: usize,
}

impl std::fmt::Debug for Masker {
    // Never the needles' bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Masker")
            .field("needles", &self.needles.len())
            .finish()
    }
}

impl Masker {
    /// The masker of `pairs` (name, value). When several names hold the
    /// same value (or a form of one equals a form of another), the first
    /// name in byte order wins. Values shorter than [`MIN_LEN`] give no
    /// needle.
    pub fn new(pairs: impl IntoIterator<Item = (String, Vec<u8>)>) -> Masker {
        let mut pairs: Vec<(String, Vec<u8>)> = pairs.into_iter().collect();
        pairs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()).then(a.1.cmp(&b.1)));
        let mut needles: Vec<Needle> = Vec::new();
        let mut seen: std::collections::HashSet<Vec<u8>> = std::collections::HashSet::new();
        for (name, value) in &pairs {
            for (form, bytes) in forms(value) {
                if seen.insert(bytes.clone()) {
                    needles.push(Needle {
                        name: name.clone(),
                        form,
                        bytes,
                    });
                }
            }
        }
        let search = search::Search::new(&needles);
        let replacement = needles
            .iter()
            .map(|n| format!("[REDACTED:{}]", n.name).into_bytes())
            .collect();
        let mut sorted: Vec<usize> = (0..needles.len()).collect();
        sorted.sort_by(|&a, &b| needles[a].bytes.cmp(&needles[b].bytes));
        let mut first = [false; 256];
        for n in &needles {
            first[usize::from(n.bytes[0])] = true;
        }
        let max_len = needles.iter().map(|n| n.bytes.len()).max().unwrap_or(0);
        Masker {
            needles,
            replacement,
            search,
            sorted,
            first,
            max_len,
        }
    }

    /// Every needle, in the order of [`Found::needle`].
    pub fn needles(&self) -> &[Needle] {
        &self.needles
    }

    /// No needle: masking changes nothing.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// The leftmost-longest, non-overlapping matches in `hay`.
    pub fn find_iter(&self, hay: &[u8]) -> std::vec::IntoIter<Found> {
        let mut out = Vec::new();
        self.find_before(hay, hay.len(), &mut out);
        out.into_iter()
    }

    /// The matches of [`Masker::find_iter`] that start before `limit`,
    /// into `out` (cleared first).
    pub fn find_before(&self, hay: &[u8], limit: usize, out: &mut Vec<Found>) {
        out.clear();
        if self.is_empty() || hay.is_empty() {
            return;
        }
        let mut occ = Vec::new();
        self.search.occurrences(hay, limit, &mut occ);
        search::select(&mut occ, out);
    }

    /// `[REDACTED:NAME]` of needle `i`.
    pub fn replacement(&self, i: usize) -> &[u8] {
        &self.replacement[i]
    }

    /// `hay` with every match replaced.
    pub fn mask(&self, hay: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(hay.len());
        self.mask_into(hay, &mut out);
        out
    }

    /// [`Masker::mask`], appending to `out`.
    ///
    /// A line (of `hay`, up to CR or LF) that was valid JSON stays valid
    /// JSON: a match outside a JSON string is replaced by the quoted
    /// `"[REDACTED:NAME]"`, and should the line still not parse (a match
    /// that straddles a string's end), the whole line is replaced by the
    /// quoted replacement of its first match. Only lines holding a match
    /// are looked at, so the cost is paid where something is masked.
    pub fn mask_into(&self, hay: &[u8], out: &mut Vec<u8>) {
        self.mask_after(hay, false, out);
    }

    /// [`Masker::mask_into`] of `hay`, whose first line continues a line
    /// whose start went out already (`continues`): that line is masked
    /// without the JSON rule, as the whole line would be — a writer
    /// releases the start of a line only when it cannot be JSON.
    pub(crate) fn mask_after(&self, hay: &[u8], continues: bool, out: &mut Vec<u8>) {
        let found: Vec<Found> = self.find_iter(hay).collect();
        let mut pos = 0;
        let mut i = 0;
        while i < found.len() {
            let f = found[i];
            let start = hay[..f.start]
                .iter()
                .rposition(|&b| is_line_end(b))
                .map_or(0, |p| p + 1);
            let end = hay[f.end..]
                .iter()
                .position(|&b| is_line_end(b))
                .map_or(hay.len(), |p| f.end + p);
            let j = i + found[i..].iter().take_while(|g| g.start < end).count();
            out.extend_from_slice(&hay[pos..start]);
            let json_rule = !(continues && start == 0);
            self.mask_line(&hay[start..end], start, &found[i..j], json_rule, out);
            pos = end;
            i = j;
        }
        out.extend_from_slice(&hay[pos..]);
    }

    /// One line (no line end) at `offset` of the haystack, with its
    /// matches (haystack positions), into `out`; see [`Masker::mask_into`].
    fn mask_line(
        &self,
        line: &[u8],
        offset: usize,
        found: &[Found],
        json_rule: bool,
        out: &mut Vec<u8>,
    ) {
        let plain = |out: &mut Vec<u8>, quote: &dyn Fn(usize) -> bool| {
            let mut pos = 0;
            for f in found {
                let (s, e) = (f.start - offset, f.end - offset);
                out.extend_from_slice(&line[pos..s]);
                let q = quote(s);
                if q {
                    out.push(b'"');
                }
                out.extend_from_slice(&self.replacement[f.needle]);
                if q {
                    out.push(b'"');
                }
                pos = e;
            }
            out.extend_from_slice(&line[pos..]);
        };
        if !json_rule || !is_json(line) {
            plain(out, &|_| false);
            return;
        }
        let outside = outside_strings(line, found.iter().map(|f| f.start - offset));
        let at = out.len();
        plain(out, &|s| outside.contains(&s));
        if !is_json(&out[at..]) {
            out.truncate(at);
            out.push(b'"');
            out.extend_from_slice(&self.replacement[found[0].needle]);
            out.push(b'"');
        }
    }

    /// Is `s` (non-empty) a proper prefix of some needle, i.e. could more
    /// bytes after it complete a match (or a longer one)?
    fn extends(&self, s: &[u8]) -> bool {
        let i = self
            .sorted
            .partition_point(|&n| self.needles[n].bytes.as_slice() < s);
        // Needles starting with `s` are contiguous from `i`; the first may
        // be `s` itself, then the next (if it starts with `s`) is longer.
        self.sorted[i..]
            .iter()
            .take(2)
            .map(|&n| &self.needles[n].bytes)
            .any(|b| b.len() > s.len() && b.starts_with(s))
    }

    /// The first position `p >= from` of `t` where `t[p..]` could still
    /// grow into a match (`t.len()` when there is none).
    fn hold_from(&self, t: &[u8], from: usize) -> usize {
        let lo = from.max((t.len() + 1).saturating_sub(self.max_len));
        (lo..t.len())
            .find(|&p| self.first[usize::from(t[p])] && self.extends(&t[p..]))
            .unwrap_or(t.len())
    }

    /// Mask the decided part of `t`, the tail of an unfinished line (no
    /// line end in it), into `out`; returns where the undecided rest
    /// starts. A match is decided when no match could start before it once
    /// more bytes come, and it cannot grow; so everything before the first
    /// position that is a proper prefix of a needle is decided.
    fn mask_decided(&self, t: &[u8], out: &mut Vec<u8>) -> usize {
        let mut pos = 0;
        let mut hold = self.hold_from(t, 0);
        for f in self.find_iter(t) {
            if hold < pos {
                hold = self.hold_from(t, pos);
            }
            if f.start >= hold {
                break;
            }
            out.extend_from_slice(&t[pos..f.start]);
            out.extend_from_slice(&self.replacement[f.needle]);
            pos = f.end;
        }
        if hold < pos {
            hold = self.hold_from(t, pos);
        }
        out.extend_from_slice(&t[pos..hold]);
        hold
    }
}

fn is_line_end(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Is `line` one JSON text (whitespace around it allowed)?
fn is_json(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    // Cheap refusals first: most masked lines are not JSON.
    !t.is_empty()
        && matches!(
            t[0],
            b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        )
        && serde_json::from_slice::<serde::de::IgnoredAny>(t).is_ok()
}

/// Which of the positions `starts` (ascending) of a JSON `line` lie
/// outside every string.
fn outside_strings(line: &[u8], starts: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut i, mut inside) = (0, false);
    for s in starts {
        while i < s {
            match line[i] {
                b'\\' if inside => i += 1,
                b'"' => inside = !inside,
                _ => {}
            }
            i += 1;
        }
        // An escape's second byte skipped past `s`: inside a string.
        if !inside && i == s {
            out.push(s);
        }
    }
    out
}

/// What the randomised tests of the masker and of `audit` share: a
/// xorshift generator, and a random text over `alphabet` with whole
/// needles of `k` planted at random places.
/// A masker of `pairs`, with `-v`'s line (and `-vv`'s names).
pub(crate) fn logged_masker(pairs: Vec<(String, Vec<u8>)>) -> std::sync::Arc<Masker> {
    let short: Vec<&str> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty() && v.len() < MIN_LEN)
        .map(|(k, _)| k.as_str())
        .collect();
    crate::info!(
        "redact: masking {} sensitive variable{}",
        pairs.len() - short.len(),
        if pairs.len() - short.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    if !short.is_empty() {
        crate::info!(
            "redact: too short to mask (under {} bytes): {}",
            MIN_LEN,
            short.join(", ")
        );
    }
    if crate::log::level() >= 2 {
        let names: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        crate::debug!("redact: sensitive: {}", names.join(", "));
    }
    std::sync::Arc::new(Masker::new(pairs))
}

#[cfg(test)]
pub(crate) mod testing {
    use super::Masker;

    /// A xorshift64 generator from `seed` (not zero).
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// Up to `len - 1` random bytes of `alphabet`, then up to `plants - 1`
    /// needles of `k` spliced in at random offsets.
    pub(crate) fn planted_text(
        k: &Masker,
        next: &mut impl FnMut() -> u64,
        alphabet: &[u8],
        len: u64,
        plants: u64,
    ) -> Vec<u8> {
        let n = (next() % len) as usize;
        let mut hay: Vec<u8> = (0..n)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        for _ in 0..(next() % plants) {
            let nd = &k.needles()[(next() % k.needles().len() as u64) as usize];
            let at = (next() % (hay.len() as u64 + 1)) as usize;
            hay.splice(at..at, nd.bytes.iter().copied());
        }
        hay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, &[u8])]) -> Masker {
        Masker::new(pairs.iter().map(|(k, v)| (k.to_string(), v.to_vec())))
    }

    #[test]
    fn masks_raw_and_encoded_forms_naming_the_variable() {
        let k = m(&[("TOKEN", b"hunter2hunter2"), ("PW", b"p@ss word")]);
        let out = k.mask(b"a hunter2hunter2 b aHVudGVyMmh1bnRlcjI= c p%40ss%20word\n");
        assert_eq!(
            out,
            b"a [REDACTED:TOKEN] b [REDACTED:TOKEN]I= c [REDACTED:PW]\n".to_vec()
        );
    }

    #[test]
    fn the_first_name_in_byte_order_wins() {
        let k = m(&[("ZED", b"samevalue"), ("ALPHA", b"samevalue"), ("B", b"xx")]);
        assert_eq!(k.mask(b"samevalue"), b"[REDACTED:ALPHA]");
        assert!(k.needles().iter().all(|n| n.name == "ALPHA"));
    }

    #[test]
    fn leftmost_longest() {
        let k = m(&[("SHORT", b"abcd"), ("LONG", b"abcdefgh")]);
        assert_eq!(
            k.mask(b"xabcdefghx abcdx"),
            b"x[REDACTED:LONG]x [REDACTED:SHORT]x"
        );
    }

    /// Leftmost-longest, the slow obvious way.
    fn naive(k: &Masker, hay: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < hay.len() {
            let best = (0..k.needles().len())
                .filter(|&n| hay[i..].starts_with(&k.needles()[n].bytes))
                .max_by_key(|&n| (k.needles()[n].bytes.len(), std::cmp::Reverse(n)));
            match best {
                Some(n) => {
                    out.extend_from_slice(k.replacement(n));
                    i += k.needles()[n].bytes.len();
                }
                None => {
                    out.push(hay[i]);
                    i += 1;
                }
            }
        }
        out
    }

    /// Many values (thousands of needles, long and short, sharing
    /// prefixes), planted whole and as forms: the search equals the naive
    /// leftmost-longest one.
    #[test]
    fn many_values_equal_the_naive_search() {
        let values: Vec<(String, Vec<u8>)> = (0..40)
            .map(|i| {
                (
                    format!("V{i:02}"),
                    format!("val{i}-{}", i * 7919).into_bytes(),
                )
            })
            .chain([
                ("P1".to_string(), b"val1-7919-and-longer".to_vec()),
                ("P2".to_string(), b"al3-2".to_vec()),
            ])
            .collect();
        let k = Masker::new(values.clone());
        assert!(k.needles().len() > 1000, "{}", k.needles().len());
        let mut hay = Vec::new();
        for (i, (_, v)) in values.iter().enumerate() {
            hay.extend_from_slice(b"x ");
            hay.extend_from_slice(v);
            if i % 3 == 0 {
                hay.extend_from_slice(&forms(v)[i % forms(v).len()].1);
            }
            hay.extend_from_slice(b"val1-7919-and-longer val3-23757 ");
        }
        assert_eq!(k.mask(&hay), naive(&k, &hay));
    }

    /// Random value sets (short, long, periodic, sharing pieces) and
    /// random texts dense with their forms, overlapping and adjacent: the
    /// search equals the naive one, and `find_before` keeps exactly the
    /// matches that start before its limit.
    #[test]
    fn equals_the_naive_search() {
        let mut next = testing::xorshift(0x9e37_79b9_7f4a_7c15);
        let alphabet = b"ab 0a1-";
        for round in 0..300 {
            let count = (next() % 4 + 1) as usize;
            let pairs: Vec<(String, Vec<u8>)> = (0..count)
                .map(|i| {
                    let len = (next() % 30 + 2) as usize;
                    let v = (0..len)
                        .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                        .collect();
                    (format!("K{i}"), v)
                })
                .collect();
            let k = Masker::new(pairs);
            if k.is_empty() {
                continue;
            }
            let hay = testing::planted_text(&k, &mut next, alphabet, 400, 8);
            assert_eq!(k.mask(&hay), naive(&k, &hay), "round {round}");
            let all: Vec<Found> = k.find_iter(&hay).collect();
            let limit = hay.len() / 2;
            let mut got = Vec::new();
            k.find_before(&hay, limit, &mut got);
            let want: Vec<Found> = all.into_iter().filter(|f| f.start < limit).collect();
            assert_eq!(got, want, "limit, round {round}");
        }
    }

    #[test]
    fn a_json_line_stays_json() {
        let k = m(&[("PORT", b"3000"), ("TOKEN", b"ghp_abcdefgh")]);
        // Inside a string: the plain replacement; outside: quoted.
        let out = k.mask(b"{\"port\":3000,\"t\":\"x ghp_abcdefgh\",\"n\":[3000]}\r\nport 3000\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"port\":\"[REDACTED:PORT]\",\"t\":\"x [REDACTED:TOKEN]\",\"n\":[\"[REDACTED:PORT]\"]}\r\nport [REDACTED:PORT]\n"
        );
        // A bare JSON number line is JSON too.
        assert_eq!(k.mask(b"3000\n"), b"\"[REDACTED:PORT]\"\n");
        // After an escaped quote, still inside the string.
        assert_eq!(
            k.mask(b"{\"a\":\"\\\" 3000\"}"),
            b"{\"a\":\"\\\" [REDACTED:PORT]\"}"
        );
        // A match across a string's end: the whole line becomes a string.
        let k = m(&[("X", b"ab\",\"cd")]);
        let out = k.mask(b"{\"k\":\"ab\",\"cd\":1}\nab\",\"cd\n");
        assert_eq!(out, b"\"[REDACTED:X]\"\n[REDACTED:X]\n");
    }

    /// Random JSON lines with values planted inside and outside strings
    /// stay JSON once masked.
    #[test]
    fn random_json_lines_stay_json() {
        let mut next = testing::xorshift(0x2545_f491_4f6c_dd1d);
        let k = m(&[("N", b"123456"), ("W", b"true"), ("S", b"s3cr3t\"q")]);
        for round in 0..500 {
            let mut v = serde_json::json!({});
            for i in 0..(next() % 5) {
                let x = match next() % 5 {
                    0 => serde_json::json!(123456),
                    1 => serde_json::json!(true),
                    2 => serde_json::json!("s3cr3t\"q and 123456"),
                    3 => serde_json::json!([123456, "true", {"k": "s3cr3t\"q"}]),
                    _ => serde_json::json!(null),
                };
                v[format!("k{i}")] = x;
            }
            let line = serde_json::to_vec(&v).unwrap();
            let out = k.mask(&line);
            assert!(
                serde_json::from_slice::<serde_json::Value>(&out).is_ok(),
                "round {round}: {}",
                String::from_utf8_lossy(&out)
            );
            assert!(!contains(&out, b"123456") && !contains(&out, b"s3cr3t"));
        }
    }

    fn contains(hay: &[u8], n: &[u8]) -> bool {
        hay.windows(n.len()).any(|w| w == n)
    }

    #[test]
    fn empty_masker_changes_nothing() {
        let k = m(&[("A", b"abc")]);
        assert!(k.is_empty());
        assert_eq!(k.mask(b"abc\xff"), b"abc\xff");
        assert_eq!(k.find_iter(b"abc").count(), 0);
    }

    #[test]
    fn debug_never_shows_values() {
        let k = m(&[("A", b"s3cr3tvalue")]);
        assert!(!format!("{k:?}").contains("s3cr3t"));
    }

    #[test]
    fn decided_part_of_a_tail() {
        let k = m(&[("A", b"abcdef"), ("B", b"abcdefghij")]);
        let mut out = Vec::new();
        // "abcdef" matched, but could grow into B's needle: held.
        assert_eq!(k.mask_decided(b"xy abcdef", &mut out), 3);
        assert_eq!(out, b"xy ");
        out.clear();
        // Decided: the next byte rules B out.
        assert_eq!(k.mask_decided(b"abcdefX ab", &mut out), 8);
        assert_eq!(out, b"[REDACTED:A]X ");
        out.clear();
        assert_eq!(k.mask_decided(b"nothing here", &mut out), 12);
    }
}
