//! The masker never panics; every occurrence of a needle (a form of a planted
//! value) in the input is covered by a match, no needle is left whole between
//! the replacements, and streaming the input in any chunks gives the same
//! bytes as masking it whole.
#![no_main]
use agentenv::internals::mask::{forms, MaskWriter, Masker};
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::sync::Arc;

/// Take `n` bytes (or what is left) from the front of `data`.
fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (a, b) = data.split_at(n);
    *data = b;
    a
}

fn occurs(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return Vec::new();
    }
    (0..=hay.len() - needle.len())
        .filter(|&i| &hay[i..i + needle.len()] == needle)
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut data = data;
    let Some((&head, _)) = data.split_first() else {
        return;
    };
    take(&mut data, 1);
    // Up to 4 values of up to 24 bytes each.
    let count = usize::from(head % 4) + 1;
    let mut pairs = Vec::new();
    for i in 0..count {
        let len = take(&mut data, 1).first().map_or(0, |b| usize::from(b % 25));
        pairs.push((format!("K{i}"), take(&mut data, len).to_vec()));
    }
    let m = Arc::new(Masker::new(pairs.clone()));
    // The text: fuzz bytes with forms planted where a 0xfe byte says so
    // (the next byte picks the form).
    let all: Vec<Vec<u8>> = pairs
        .iter()
        .flat_map(|(_, v)| forms(v).into_iter().map(|(_, f)| f))
        .collect();
    let mut text = Vec::new();
    let mut rest = data;
    while let Some((&b, tail)) = rest.split_first() {
        rest = tail;
        if b == 0xfe && !all.is_empty() {
            if let Some((&pick, tail)) = rest.split_first() {
                rest = tail;
                text.extend_from_slice(&all[usize::from(pick) % all.len()]);
                continue;
            }
        }
        text.push(b);
    }
    let whole = m.mask(&text);

    // Every needle occurrence overlaps a match; no needle whole in a gap.
    let found: Vec<_> = m.find_iter(&text).collect();
    for n in m.needles() {
        for at in occurs(&text, &n.bytes) {
            let end = at + n.bytes.len();
            assert!(
                found.iter().any(|f| f.start < end && at < f.end),
                "an occurrence of a needle is not masked"
            );
        }
    }
    let mut pos = 0;
    let mut gaps = Vec::new();
    for f in &found {
        gaps.push(&text[pos..f.start]);
        pos = f.end;
    }
    gaps.push(&text[pos..]);
    for g in gaps {
        for n in m.needles() {
            assert!(occurs(g, &n.bytes).is_empty(), "a needle left whole");
        }
    }

    // Streaming, in chunks sized by the text's own bytes.
    let mut w = MaskWriter::new(m.clone(), Vec::new());
    let mut rest = &text[..];
    let mut i = 0;
    while !rest.is_empty() {
        let n = (usize::from(text[i % text.len()]) % 17 + 1).min(rest.len());
        w.write_all(&rest[..n]).unwrap();
        rest = &rest[n..];
        i += 1;
    }
    assert_eq!(w.finish().unwrap(), whole, "streamed != whole");
});
