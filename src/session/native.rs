//! Native evaluation of plain env files made only of simple assignments,
//! with results identical to sourcing them with bash.
//
// OWNER: fast-path work (issue 4). Interface: `evaluate`.

use crate::core::{ChangeSet, Env};

/// What the native evaluator decided for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// The file is in the recognised subset; these are exactly the changes
    /// bash would report.
    Applied(ChangeSet),
    /// The file is in the recognised subset and bash would fail it.
    Failed,
    /// Not in the subset: run bash.
    Bash,
}

/// Evaluate `text` (a plain env file) against the accumulated env.
pub fn evaluate(_text: &[u8], _env: &Env) -> Outcome {
    Outcome::Bash
}
