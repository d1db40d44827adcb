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
