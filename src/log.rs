//! Log lines on stderr: `agentenv: warning: …`, `agentenv: info: …`,
//! `agentenv: debug: …`, `agentenv: error: …`.
//!
//! Messages name files, line numbers, layers and variable names, never
//! values. Verbosity is process-global and set once by the CLI:
//! -2 silent (`-qq`), -1 errors only (`-q`), 0 warnings (default),
//! 1 info (`-v`), 2 debug (`-vv`).

use std::io::Write;
use std::sync::atomic::{AtomicI8, Ordering};

static LEVEL: AtomicI8 = AtomicI8::new(0);

pub fn set_level(level: i8) {
    LEVEL.store(level, Ordering::Relaxed);
}

pub fn level() -> i8 {
    LEVEL.load(Ordering::Relaxed)
}

fn emit(min: i8, tag: &str, msg: std::fmt::Arguments<'_>) {
    if level() >= min {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "agentenv: {tag}: {msg}");
    }
}

pub fn error(msg: std::fmt::Arguments<'_>) {
    emit(-1, "error", msg)
}
pub fn warning(msg: std::fmt::Arguments<'_>) {
    emit(0, "warning", msg)
}
pub fn info(msg: std::fmt::Arguments<'_>) {
    emit(1, "info", msg)
}
pub fn debug(msg: std::fmt::Arguments<'_>) {
    emit(2, "debug", msg)
}

/// Print one recorded [`Note`](crate::core::Note) at its level (library
/// code records notes; the CLI prints them with this).
pub fn note(n: &crate::core::Note) {
    use crate::core::Level;
    let text = format_args!("{}", n.text);
    match n.level {
        Level::Warning => warning(text),
        Level::Info => info(text),
        Level::Debug => debug(text),
    }
}

/// Print every note, in order.
pub fn notes<'a>(ns: impl IntoIterator<Item = &'a crate::core::Note>) {
    for n in ns {
        note(n);
    }
}

// The macros are crate-private: named `log_*` here (so they do not
// collide with the functions above or the built-in `warn` attribute) and
// imported as `crate::warn!`, `crate::info!`, `crate::debug!`,
// `crate::error!`.

/// `warn!("cannot read {}", path.display())`
macro_rules! log_warn {
    ($($t:tt)*) => { $crate::log::warning(format_args!($($t)*)) };
}
macro_rules! log_info {
    ($($t:tt)*) => { $crate::log::info(format_args!($($t)*)) };
}
macro_rules! log_debug {
    ($($t:tt)*) => { $crate::log::debug(format_args!($($t)*)) };
}
macro_rules! log_error {
    ($($t:tt)*) => { $crate::log::error(format_args!($($t)*)) };
}
#[allow(unused_imports)]
pub(crate) use {log_debug as debug, log_error as error, log_info as info, log_warn as warn};
