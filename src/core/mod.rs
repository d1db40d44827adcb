//! The one engine every job runs on: environments, change sets, layers and
//! the assembly that records provenance.
//!
//! An environment is a map from names to values. On Unix both are arbitrary
//! bytes (minus NUL), so the engine carries them as [`OsString`]: nothing is
//! decoded or re-encoded while layers run. Conversion happens only at the
//! sinks (the renderers replace undecodable bytes as the reference does:
//! `?` in text formats, `\udcXX` in JSON), and `exec` hands the bytes to the
//! child unchanged.
//!
//! This module does no I/O (it prints nothing either: diagnostics are
//! [`Note`]s kept on the [`Assembly`]).

mod assembly;
mod changes;
pub mod explain;
mod sensitivity;

pub use assembly::{Action, Assembly, LayerInfo, LayerKind, LayerRecord, Level, Note, Touch};
pub use changes::ChangeSet;
pub use sensitivity::{
    masking, DecidedBy, Masking, Sensitivity, MASK_DEFAULT_MIN_LEN, MIN_MASKED_LEN, UNMASKED_WORDS,
};

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};

/// An environment: names to values, iterated in byte order of the names
/// (which is code-point order for UTF-8 names, the reference's sort order).
pub type Env = BTreeMap<OsString, OsString>;

/// The current process environment as an [`Env`].
pub fn process_env() -> Env {
    std::env::vars_os().collect()
}

/// Look a name up in an environment by `&str`.
pub fn get<'a>(env: &'a Env, name: &str) -> Option<&'a OsStr> {
    env.get(OsStr::new(name)).map(|v| v.as_os_str())
}

/// An [`Env`] from string pairs: the one fixture the unit tests of core,
/// session and render share.
#[cfg(test)]
pub(crate) fn env_of(pairs: &[(&str, &str)]) -> Env {
    pairs
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}
