//! Go `os.Expand` semantics hold on any UTF-8 input: no panic, text without
//! `$` is returned as is, substituted text is never rescanned, every name
//! handed to the mapping is a non-empty substring of the input, and the
//! validation scan (`braced_names`) yields non-empty names free of `}`.
#![no_main]
use agentenv::internals::{braced_names, expand};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };

    // Identity mapping of names to a marker containing `$`: never rescanned.
    let mut names: Vec<String> = Vec::new();
    let out = expand(s, |n| {
        names.push(n.to_string());
        "$X${Y}".to_string()
    });
    if !s.contains('$') {
        assert_eq!(out, s, "no `$`: unchanged");
        assert!(names.is_empty());
    }
    for n in &names {
        assert!(!n.is_empty(), "the mapping never sees an empty name");
        assert!(s.contains(n.as_str()), "a name is part of the input");
    }
    // Every call contributes exactly the replacement; the rest is input text.
    let empty = expand(s, |_| String::new());
    assert!(empty.len() <= s.len(), "expansion to \"\" never grows");
    assert_eq!(out.len(), empty.len() + names.len() * "$X${Y}".len());
    // Rescanning would change the count: expanding the marker again finds names.
    let twice = expand(&empty, |_| String::new());
    assert!(twice.len() <= empty.len());

    for n in braced_names(s) {
        assert!(!n.is_empty() && !n.contains('}'));
        assert!(s.contains(&format!("${{{n}}}")));
    }
});
