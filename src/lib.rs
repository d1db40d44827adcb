//! agentenv builds the environment a process starts with, from layers.
//!
//! Every job is the same shape: a base environment, an ordered list of
//! layers, a policy per layer (*override*: later wins; *fill*: only keys the
//! base did not reserve) and a result that records, per key, every layer
//! that touched it. See [`core`] for the engine, [`dotenv`] for the one
//! dotenv grammar, [`render`] for the eight output formats, and the three
//! jobs: [`session`] (contract A and B of dotagents), [`operator`] (the
//! launch layer) and [`harness`] (fullsend harness files).
//!
//! Values are carried as bytes ([`std::ffi::OsString`]); no value ever
//! reaches a log line or an error message.
//!
//! Everything else in the crate is private: the CLI, process handling, the
//! file-system helpers and the compatibility rules are implementation
//! details of the `agentenv` binary.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod core;
pub mod dotenv;
pub mod harness;
pub mod operator;
pub mod render;
pub mod session;

mod agent;
mod audit;
mod cli;
mod compat;
mod expand;
mod fsutil;
mod hook;
mod jsonedit;
mod log;
mod mask;
mod mcp;
mod platform;
mod process;
mod refs;

#[cfg(test)]
mod import_graph;
#[cfg(test)]
mod shell_texts;
mod tty;

// `crate::warn!(…)` and its siblings (crate-private, not exported).
#[allow(unused_imports)]
pub(crate) use log::{debug, error, info, warn};

/// Not part of the API: what the `agentenv` binary, the integration tests,
/// the benches and the fuzz targets reach inside the crate. It can change
/// in any release.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod internals {
    pub use crate::cli::main;
    pub use crate::compat::{ident, js, node, python};
    pub use crate::expand::{braced_names, expand};
    pub use crate::harness::schema::parse_harness;
    pub use crate::session::cache::key_for;
    pub use crate::session::native::{evaluate, Outcome};
    pub use crate::session::shell::SOURCE_SCRIPT;

    /// The masker (docs/redact.md#keeping-secrets-out-of-the-agents-context):
    /// forms, [`Masker`](crate::mask::Masker), the streaming writer (`agentenv
    /// audit`, the tests, benches, fuzz).
    pub mod mask {
        pub use crate::mask::{
            forms, pump, Form, Found, MaskWriter, Masker, Needle, Pump, DRAIN_IDLE, IDLE, MIN_LEN,
        };
    }

    /// The clap tree and man pages (`tests/it/examples.rs`, `tests/it/packaging.rs`).
    pub mod cli {
        pub use crate::agent::wiring::HOOK_ARGS;
        pub use crate::cli::completions::completion_command;
        pub use crate::cli::man::{all_commands, command, page_name, split_after_help, Example};
    }
}
