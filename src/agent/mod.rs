//! The agent wiring: what `agentenv hook claude|codex …` and `agentenv init
//! claude|codex` do, without clap (the command line is `cli::agent`).

pub(crate) mod client;
pub(crate) mod daemon;
pub(crate) mod entry;
pub(crate) mod guard;
pub(crate) mod hook;
pub(crate) mod protocol;
pub(crate) mod relay;
pub(crate) mod settings_file;
pub(crate) mod wiring;
