//! The project's one dotenv grammar (SPEC §3): a pure parser returning
//! entries and diagnostics. No I/O.
//
// OWNER: dotenv work (issue 2, point 3). Interface fixed: `Entry`,
// `Diagnostic`, `Parsed`, `parse`, `parse_bytes`, `Parsed::to_changeset`,
// `write_value`.

use crate::core::ChangeSet;

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

/// Parse text.
pub fn parse(_text: &str) -> Parsed {
    todo!("dotenv work")
}

/// Parse bytes, decoding UTF-8 lossily.
pub fn parse_bytes(bytes: &[u8]) -> Parsed {
    parse(&String::from_utf8_lossy(bytes))
}

/// Write `KEY=VALUE` so that [`parse`] reads back exactly `value`, or
/// `None` when the grammar cannot carry it.
pub fn write_value(_key: &str, _value: &str) -> Option<String> {
    todo!("dotenv work")
}
