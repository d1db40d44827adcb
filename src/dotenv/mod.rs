//! The project's one dotenv grammar (SPEC §3): a pure parser returning
//! entries and diagnostics. No I/O.

use crate::core::ChangeSet;

mod parser;
mod scan;
mod write;

#[cfg(test)]
mod tests;

/// One variable: its final value (later assignments win) and the line of
/// the assignment that gave it. Entries are in first-occurrence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: String,
    pub line: u32,
}

/// Something `dotenv check` reports. Never contains a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub line: u32,
    pub message: String,
    /// `true` for what makes `check` exit 1 (ignored line, unterminated quote).
    pub is_error: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub entries: Vec<Entry>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    pub fn to_changeset(&self) -> ChangeSet {
        let mut cs = ChangeSet::new();
        for e in &self.entries {
            cs.set_at(e.key.as_str(), e.value.as_str(), e.line);
        }
        cs
    }
}

/// Parse text (SPEC §3). Never fails: lines the grammar cannot use are
/// skipped and reported in [`Parsed::diagnostics`].
pub fn parse(text: &str) -> Parsed {
    parser::parse(text)
}

/// Parse bytes, decoding UTF-8 lossily (each maximal invalid sequence
/// becomes one U+FFFD).
pub fn parse_bytes(bytes: &[u8]) -> Parsed {
    // `from_utf8` is much faster than the lossy decoder on valid input.
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(_) => parse(&String::from_utf8_lossy(bytes)),
    }
}

pub use write::write_value;
