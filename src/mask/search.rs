//! The search behind [`super::Masker`]: every occurrence of every needle
//! in a haystack, overlapping, from which the masker picks the
//! leftmost-longest non-overlapping sequence.
//!
//! A value has about a hundred needles (od's spaced-hex windows and
//! pieces are most of them), and 20 values thousands: too many for one
//! fast automaton (the `aho-corasick` crate's SIMD prefilter, Teddy, takes
//! up to about 64 patterns; past that its DFA visits every byte and its
//! start-byte prefilters are useless on needles that start with a hex
//! digit). So the needles are split by length:
//!
//! * **Long needles** (at least [`LONG`] = 8 bytes; all of them for a
//!   value of a usual length): a sampled q-gram filter. With `q = 4` and
//!   `stride = shortest − q + 1`, every occurrence of a long needle holds
//!   exactly one position that is a multiple of `stride` (counted from the
//!   start of the haystack) in its first `stride` bytes, and the 4 bytes
//!   there are the needle's gram at that offset. The scan reads one gram
//!   every `stride` bytes (5 for the 8-character tail of a wrapped
//!   encoding, 8 for od's shortest pieces) and tests a hash of it in a
//!   bitmap of the grams at the first `stride` offsets of every long
//!   needle (64 bits or more per gram, so under 2% of the bits set). A set
//!   bit is looked up in the sorted (gram, offset) list; for each offset,
//!   the long needles starting there are found by narrowing them, in byte
//!   order, byte by byte along the haystack (a prefix many needles share,
//!   such as a provider's token prefix or od's pieces, is read once). An
//!   occurrence is found from one sample only, once.
//! * **Short needles** (values of 4 to 7 bytes and their short forms):
//!   one `aho-corasick` automaton, overlapping search.
//!
//! Both give every occurrence, so the union is exact; the masker's
//! selection over it is the same as one leftmost-longest automaton over
//! all the needles (`tests::equals_the_naive_search`).

use super::Needle;
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// Gram length.
const Q: usize = 4;
/// Needles at least this long go through the q-gram filter (the stride is
/// then at least `LONG - Q + 1`).
pub(crate) const LONG: usize = 8;
/// The bitmap has at least 64 bits per indexed gram (so under 1.6% of
/// them set), between `2^MIN_BITS` and `2^MAX_BITS` bits.
const MIN_BITS: u32 = 18;
const MAX_BITS: u32 = 24;

/// One occurrence of a needle: (start, end, needle index).
pub(crate) type Occ = (usize, usize, usize);

pub(crate) struct Search {
    stride: usize,
    /// Bits of the gram hash.
    shift: u32,
    bits: Vec<u64>,
    /// (gram, offset in a long needle), sorted, distinct.
    grams: Vec<(u64, u32)>,
    /// The long needles in byte order: (bytes, needle index).
    long: Vec<(Vec<u8>, usize)>,
    short: Option<AhoCorasick>,
    /// Pattern index of `short` → needle index.
    short_ids: Vec<usize>,
}

#[inline]
fn gram(b: &[u8], p: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[p..p + Q].try_into().expect("4 bytes")))
}

#[inline]
fn hash(g: u64, shift: u32) -> usize {
    (g.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

impl Search {
    pub(crate) fn new(needles: &[Needle]) -> Search {
        let shortest_long = needles
            .iter()
            .map(|n| n.bytes.len())
            .filter(|&l| l >= LONG)
            .min();
        let stride = shortest_long.map_or(1, |l| l - Q + 1);
        // Only the grams at offsets 0..stride of each long needle: an
        // occurrence starting at `s` is found at its first sample, the
        // multiple of `stride` in `s..s + stride` (inside the needle's
        // last gram, as `stride <= len - Q + 1`), so it is reported once.
        let indexed: usize = needles.iter().filter(|n| n.bytes.len() >= LONG).count() * stride;
        let bits = (indexed * 64)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(MIN_BITS, MAX_BITS);
        let mut s = Search {
            stride,
            shift: 64 - bits,
            bits: Vec::new(),
            grams: Vec::with_capacity(indexed),
            long: Vec::new(),
            short: None,
            short_ids: Vec::new(),
        };
        if shortest_long.is_some() {
            s.bits = vec![0u64; 1 << (bits - 6)];
        }
        let mut short: Vec<&[u8]> = Vec::new();
        for (i, n) in needles.iter().enumerate() {
            let b = &n.bytes;
            if b.len() >= LONG {
                for o in 0..stride {
                    let g = gram(b, o);
                    let h = hash(g, s.shift);
                    s.bits[h >> 6] |= 1 << (h & 63);
                    s.grams.push((g, o as u32));
                }
                s.long.push((b.clone(), i));
            } else {
                short.push(b);
                s.short_ids.push(i);
            }
        }
        s.grams.sort_unstable();
        s.grams.dedup();
        s.long.sort_unstable();
        if !short.is_empty() {
            let build = |kind| {
                AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .kind(kind)
                    .build(&short)
            };
            s.short = Some(
                build(Some(AhoCorasickKind::DFA))
                    .or_else(|_| build(None))
                    .expect("short needles are few and small enough for an automaton"),
            );
        }
        s
    }

    /// Every occurrence of a needle that starts before `limit` (and ends
    /// inside `hay`), appended to `out` in no particular order, each once.
    pub(crate) fn occurrences(&self, hay: &[u8], limit: usize, out: &mut Vec<Occ>) {
        if !self.long.is_empty() && hay.len() >= Q {
            let stride = self.stride;
            // A needle starting before `limit` holds a sample before
            // `limit + stride`.
            let last = (hay.len() - Q).min(limit.saturating_add(stride - 1));
            let bits = &self.bits[..];
            let shift = self.shift;
            let mut p = 0;
            while p <= last {
                let g = gram(hay, p);
                let h = hash(g, shift);
                if bits[h >> 6] & (1 << (h & 63)) != 0 {
                    self.verify(hay, p, g, limit, out);
                }
                p += stride;
            }
        }
        if let Some(ac) = &self.short {
            // Reported in order of their ends, not starts.
            for m in ac.find_overlapping_iter(hay) {
                if m.start() < limit {
                    out.push((m.start(), m.end(), self.short_ids[m.pattern().as_usize()]));
                }
            }
        }
    }

    /// A sample at `p` whose gram `g` is in the bitmap: for each offset
    /// at which `g` begins some long needle's first `stride` grams, every
    /// long needle starting at `p - offset`.
    #[cold]
    fn verify(&self, hay: &[u8], p: usize, g: u64, limit: usize, out: &mut Vec<Occ>) {
        let from = self.grams.partition_point(|e| e.0 < g);
        for &(eg, o) in &self.grams[from..] {
            if eg != g {
                break;
            }
            let o = o as usize;
            if o <= p && p - o < limit {
                self.starting_at(hay, p - o, out);
            }
        }
    }

    /// Every long needle at `hay[start..]`: the needles in byte order that
    /// agree with the haystack on the first `d` bytes form one range,
    /// narrowed byte by byte (a needle of length `d` is the range's first
    /// and a match); a prefix shared by many needles is read once.
    fn starting_at(&self, hay: &[u8], start: usize, out: &mut Vec<Occ>) {
        let rest = &hay[start..];
        let (mut lo, mut hi) = (0, self.long.len());
        let mut d = 0;
        while lo < hi {
            let (b, n) = &self.long[lo];
            if b.len() == d {
                out.push((start, start + d, *n));
                lo += 1;
                if lo == hi {
                    break;
                }
            }
            let Some(&c) = rest.get(d) else { break };
            let range = &self.long[lo..hi];
            let a = range.partition_point(|(b, _)| b[d] < c);
            let z = range.partition_point(|(b, _)| b[d] <= c);
            (lo, hi) = (lo + a, lo + z);
            d += 1;
        }
    }
}

/// The leftmost-longest non-overlapping selection of `occ` (sorted here):
/// from the end of the last match, the occurrence that starts first, the
/// longest of those.
pub(crate) fn select(occ: &mut [Occ], out: &mut Vec<super::Found>) {
    occ.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut pos = 0;
    for &(start, end, needle) in occ.iter() {
        if start >= pos {
            out.push(super::Found { needle, start, end });
            pos = end;
        }
    }
}
