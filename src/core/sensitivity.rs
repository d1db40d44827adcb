//! Which values are secret: [`Sensitivity`] says of one variable whether
//! its final value is public or sensitive, who decided, and the
//! description a store gave it. Pure data: the session decides
//! (`session::sensitive`), `explain` shows it, a masker masks the
//! sensitive values.

use std::fmt;
use std::path::PathBuf;

/// Who decided whether a variable is public.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedBy {
    /// agentenv: a variable it computes (roots, interpreter, overlay roots,
    /// identity, `PATH`, `PYTHONPATH`, the proxy variables) is public; a
    /// proxy URL holding a user or password is sensitive.
    Agentenv,
    /// An entry of an `agentenv.toml` (the file and the entry's line) of
    /// the store or overlay whose layer set the final value.
    Declaration {
        /// The `agentenv.toml`.
        file: PathBuf,
        /// The entry's line (1-based).
        line: u32,
    },
    /// No declaration covers it: a layer of this store or overlay (its
    /// directory) set the final value, so it is sensitive.
    Store(PathBuf),
    /// The value is the base environment's (no layer set it): never
    /// public unless agentenv computes the name, and not a value agentenv
    /// masks (it is the caller's own).
    Base,
}

impl fmt::Display for DecidedBy {
    /// `agentenv`, `FILE:LINE`, the store's directory, or
    /// `base environment`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecidedBy::Agentenv => f.write_str("agentenv"),
            DecidedBy::Declaration { file, line } => write!(f, "{}:{line}", file.display()),
            DecidedBy::Store(dir) => write!(f, "{}", dir.display()),
            DecidedBy::Base => f.write_str("base environment"),
        }
    }
}

/// Whether one variable's final value is public, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sensitivity {
    /// `true`: the value may be shown (`env --public-only` renders it, a
    /// masker leaves it); `false`: sensitive.
    pub public: bool,
    /// The `description` of the declaration that covers it, if any.
    pub description: Option<String>,
    /// Who decided.
    pub decided_by: DecidedBy,
    /// Declared `sensitive = true` (or otherwise known to be a secret):
    /// masked from [`MIN_MASKED_LEN`] bytes whatever it looks like, not
    /// only from [`MASK_DEFAULT_MIN_LEN`] (see [`masking`]).
    pub declared_sensitive: bool,
}

impl Sensitivity {
    /// `"public"` or `"sensitive"`.
    pub fn word(&self) -> &'static str {
        if self.public {
            "public"
        } else {
            "sensitive"
        }
    }
}

/// A sensitive value shorter than this many bytes is not masked (it would
/// shred output); `explain` flags it as "too short to mask".
pub const MIN_MASKED_LEN: usize = 4;

/// A value that is only sensitive by default (no `sensitive = true`) is
/// masked from this many bytes (docs/masking.md#masked-or-not).
pub const MASK_DEFAULT_MIN_LEN: usize = 8;

/// The words a value only sensitive by default is never masked as (any
/// case): masking them would shred every `"ok":true` in a JSON reply.
pub const UNMASKED_WORDS: &[&str] = &["true", "false", "yes", "no", "on", "off", "null", "none"];

/// Whether a sensitive value is masked, and if not why
/// (docs/masking.md#masked-or-not). The one per-value decision every masker user takes
/// ([`masking`]): `exec`/`launch`/`harness run --redact`, `redact`, the
/// agent hooks, `audit`'s needles, `--format github`'s `::add-mask::`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Masking {
    /// Masked, in every form.
    Masked,
    /// Shorter than [`MIN_MASKED_LEN`] bytes: never masked.
    TooShort,
    /// Only sensitive by default and shorter than [`MASK_DEFAULT_MIN_LEN`].
    Short,
    /// Only sensitive by default and all ASCII digits.
    Number,
    /// Only sensitive by default and one of [`UNMASKED_WORDS`].
    Word,
}

impl Masking {
    /// Is the value masked?
    pub fn is_masked(self) -> bool {
        self == Masking::Masked
    }

    /// Why not, in words (`None` when masked): what `explain` and `-v`
    /// print, never a value.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            Masking::Masked => None,
            Masking::TooShort => Some("too short to mask"),
            Masking::Short => {
                Some("not masked: shorter than 8 bytes; declare sensitive = true to mask it")
            }
            Masking::Number => Some("not masked: a number; declare sensitive = true to mask it"),
            Masking::Word => {
                Some("not masked: a boolean or null word; declare sensitive = true to mask it")
            }
        }
    }

    /// A short stable name for JSON: `masked`, `too-short`, `short`,
    /// `number`, `word`.
    pub fn as_str(self) -> &'static str {
        match self {
            Masking::Masked => "masked",
            Masking::TooShort => "too-short",
            Masking::Short => "short",
            Masking::Number => "number",
            Masking::Word => "word",
        }
    }
}

/// Masked or not (docs/masking.md#masked-or-not): a sensitive `value` is masked when it is
/// at least [`MASK_DEFAULT_MIN_LEN`] bytes, or — `declared` (`sensitive =
/// true`) — at least [`MIN_MASKED_LEN`]; a value only sensitive by default
/// that is all ASCII digits or one of [`UNMASKED_WORDS`] (any case) is
/// never masked. Such values stay sensitive (`--public-only` leaves them
/// out); only the masker leaves them alone.
pub fn masking(value: &[u8], declared: bool) -> Masking {
    if value.len() < MIN_MASKED_LEN {
        Masking::TooShort
    } else if declared {
        Masking::Masked
    } else if value.iter().all(u8::is_ascii_digit) {
        Masking::Number
    } else if UNMASKED_WORDS
        .iter()
        .any(|w| w.as_bytes().eq_ignore_ascii_case(value))
    {
        Masking::Word
    } else if value.len() < MASK_DEFAULT_MIN_LEN {
        Masking::Short
    } else {
        Masking::Masked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_or_not() {
        for (v, want) in [
            (&b"abc"[..], Masking::TooShort),
            (b"3000", Masking::Number),
            (b"123456789012", Masking::Number),
            (b"true", Masking::Word),
            (b"FALSE", Masking::Word),
            (b"None", Masking::Word),
            (b"yes", Masking::TooShort),
            (b"abcdefg", Masking::Short),
            (b"abcdefgh", Masking::Masked),
            (b"ghp_0123456789", Masking::Masked),
            (b"truetrue", Masking::Masked),
            (b"12345678x", Masking::Masked),
        ] {
            assert_eq!(masking(v, false), want, "{}", String::from_utf8_lossy(v));
        }
        for v in [&b"3000"[..], b"true", b"abcd", b"123456789012"] {
            assert_eq!(masking(v, true), Masking::Masked);
        }
        assert_eq!(masking(b"abc", true), Masking::TooShort);
        assert_eq!(
            Masking::Number.reason(),
            Some("not masked: a number; declare sensitive = true to mask it")
        );
    }
}
