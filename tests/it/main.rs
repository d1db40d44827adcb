//! The integration tests, as one binary (`cargo test --test it`): one
//! module per command or concern, all on the kit in [`support`]. One
//! binary links the crate once, where a file per binary linked it once
//! per file; and a helper of the kit that no module uses is dead code
//! rustc reports.
//!
//! Run one module with `cargo test --test it cache::`, one test with
//! `cargo test --test it cache::replays_verbatim_and_entries_are_owner_only -- --exact`.
//! (A filter matches anywhere in the name: `hook::` runs `agent_hook::` too.)
//! A new test file is a new module here (`tests/it/NAME.rs` and a `mod`
//! line below), never a new file directly under `tests/` (that would be a
//! binary of its own).

mod support;

mod agent_clients;
mod agent_hook;
mod audit;
mod bash32;
mod cache;
mod cli;
mod compat;
mod doc_pointers;
mod dotenv_cli;
mod examples;
mod explain;
mod harness;
mod hook;
mod hostile;
mod integrations;
mod into;
mod launch;
mod launch_node;
mod library_quiet;
mod mask;
mod mcp;
mod native_vs_bash;
mod newcomer;
mod oracle;
mod package_contents;
mod packaging;
mod platform;
mod properties;
mod redact;
mod refs;
mod refs_agent;
mod refs_more;
mod render_oracle;
mod roundtrip;
mod secret_audit;
mod sensitive;
mod session_cli;
mod session_secrets;
mod set;
mod trust;
