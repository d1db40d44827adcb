//! The agent wiring: what `agentenv hook claude|codex …` and `agentenv init
//! claude|codex` do, without clap (the command line is `cli::agent`).

pub(crate) mod client;
pub(crate) mod daemon;
pub(crate) mod entry;
pub(crate) mod events;
pub(crate) mod guard;
pub(crate) mod hook;
pub(crate) mod install;
pub(crate) mod protocol;
pub(crate) mod relay;
pub(crate) mod settings_file;
pub(crate) mod wiring;

/// Why `init` or a hook could not do its job: a usage error (the command
/// line's exit 2) or a runtime one (exit 1); the message is value-free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Error {
    Usage(String),
    Runtime(String),
}
