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
        let msg = msg.to_string();
        // Some messages are several lines on purpose (a harness validation
        // lists one unresolved variable a line): line feeds stay here; the
        // single-line displays escape them too (`cli::say`, the hook's trust
        // line, `status`' fields).
        let text = escape_controls(&msg, true);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "agentenv: {tag}: {text}");
    }
}

/// `s` made safe to show on a terminal: every control character — C0
/// (`\x00`–`\x1f`, line breaks too unless `keep_newlines`), DEL and C1
/// (`U+0080`–`U+009F`) — becomes `\xHH` (C0, DEL) or `\u{HH}` (C1), so a
/// path or name holding `ESC ] 0 ; … BEL` or `CR` can neither drive the
/// terminal nor overwrite or forge a line. The one escaping of everything
/// agentenv *displays* (its messages on stderr, `status`' text); outputs
/// that carry values (`env`, `--into`, `-o`) are never passed through it.
pub fn escape_controls(s: &str, keep_newlines: bool) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| {
        (c.is_control() && !(keep_newlines && c == '\n')) || ('\u{80}'..='\u{9f}').contains(&c)
    };
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !bad(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
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

#[cfg(test)]
mod tests {
    use super::escape_controls;

    #[test]
    fn control_characters_are_escaped_others_kept() {
        let p = "/r/x\u{1b}]0;T\u{7}\u{1b}[2K\rloaded OK\u{1b}[8m\u{9b}31m\u{7f}/.agents";
        assert_eq!(
            escape_controls(p, false),
            "/r/x\\x1b]0;T\\x07\\x1b[2K\\x0dloaded OK\\x1b[8m\\u{9b}31m\\x7f/.agents"
        );
        assert_eq!(escape_controls("a\nb\tc", false), "a\\x0ab\\x09c");
        assert_eq!(escape_controls("a\nb\tc", true), "a\nb\\x09c");
        // Printable text, non-ASCII included, is untouched (borrowed).
        let fine = "/home/\u{e9}t\u{e9} ✓/\u{a0}x\\y";
        assert!(matches!(
            escape_controls(fine, false),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
