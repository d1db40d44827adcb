//! The project's one dotenv grammar (docs/dotenv.md#the-grammar): a pure
//! parser returning entries and diagnostics. No I/O.

mod parser;
mod scan;
mod write;

#[cfg(test)]
mod tests;

/// One variable: its final value (later assignments win) and the line of
/// the assignment that gave it. Entries are in first-occurrence order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The variable's name.
    pub key: String,
    /// Its final value.
    pub value: String,
    /// The 1-based line of the assignment that gave the value.
    pub line: u32,
}

/// Something `dotenv check` reports. Never contains a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The 1-based line it is about.
    pub line: u32,
    /// What to print (the line's shape, never its text).
    pub message: String,
    /// `true` for what makes `check` exit 1 (ignored line, unterminated
    /// quote, a multi-line value that swallowed assignment-like lines).
    pub is_error: bool,
    /// What it is about.
    pub kind: DiagnosticKind,
}

/// What a [`Diagnostic`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticKind {
    /// A line that is not blank, a comment or an assignment.
    Ignored,
    /// A quote that never closes (or a backtick not closed on its line).
    Unterminated,
    /// A quoted value that spans lines and swallowed lines that look like
    /// assignments, though a later quote closed it.
    Swallowed,
    /// Text after a closing quote: the whole raw text is the value.
    Trailing,
    /// A key assigned again.
    Duplicate,
    /// A value cut at a NUL.
    Nul,
    /// The closing count of findings over the limit.
    TooMany,
}

impl DiagnosticKind {
    /// A sign the file is broken (what `launch` warns about): everything
    /// but a duplicate key, which layered files use on purpose.
    pub fn is_breakage(self) -> bool {
        !matches!(self, DiagnosticKind::Duplicate)
    }
}

/// What [`parse`] found in a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The variables, in first-occurrence order.
    pub entries: Vec<Entry>,
    /// The findings, in line order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse text (docs/dotenv.md#the-grammar). Never fails: lines the grammar
/// cannot use are skipped and reported in [`Parsed::diagnostics`].
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
