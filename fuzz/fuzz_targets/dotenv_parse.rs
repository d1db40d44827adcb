//! The dotenv grammar never panics, yields only valid keys with NUL-free
//! values, and every value `write_value` accepts parses back exactly.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = agentenv::dotenv::parse_bytes(data);
    let mut seen = std::collections::HashSet::new();
    for e in &parsed.entries {
        let b = e.key.as_bytes();
        assert!(!b.is_empty() && (b[0].is_ascii_alphabetic() || b[0] == b'_'));
        assert!(b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_'));
        assert!(seen.insert(e.key.clone()), "duplicate entry");
        assert!(!e.value.contains('\0'));
        assert!(e.line >= 1);
        if let Some(line) = agentenv::dotenv::write_value(&e.key, &e.value) {
            let back = agentenv::dotenv::parse(&line);
            assert_eq!(back.entries.len(), 1, "write_value output is one entry");
            assert_eq!(back.entries[0].key, e.key);
            assert_eq!(back.entries[0].value, e.value, "write_value round trip");
        }
    }
});
