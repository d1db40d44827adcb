//! agentenv builds the environment a process starts with, from layers.
//!
//! Every job is the same shape: a base environment, an ordered list of
//! layers, a policy per layer (*override*: later wins; *fill*: only keys the
//! base did not reserve) and a result that records, per key, every layer
//! that touched it. See [`core`] for the engine, [`dotenv`] for the one
//! dotenv grammar, [`render`] for the eight output formats.
//!
//! Values are carried as bytes ([`std::ffi::OsString`]); no value ever
//! reaches a log line or an error message.
#![forbid(unsafe_code)]

pub mod cli;
#[doc(hidden)]
pub mod compat;
pub mod core;
pub mod dotenv;
pub mod expand;
pub mod fsutil;
pub mod harness;
pub mod hook;
pub mod log;
pub mod operator;
pub mod process;
pub mod render;
pub mod session;
pub mod trust;
