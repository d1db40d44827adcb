//! `--format auto` on POSIX: the immediate parent process's name, as the
//! reference's `_detect_shell_format_posix` finds it.
//!
//! Order: `/proc/<ppid>/comm`, else `ps -o comm= -p <ppid>`, else the
//! basename of `$SHELL`; the first non-empty answer is normalised (trim,
//! basename, lower-case, strip leading `-`, strip `.exe`) and mapped; any
//! other name or any failure gives `export`. Reads process names only.

use super::pystr::strip;
use super::Format;
use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

/// The reference's `_norm_comm`.
pub(crate) fn norm_comm(name: &str) -> String {
    let s = strip(name);
    let base = match s.rfind('/') {
        Some(i) => &s[i + 1..],
        None => s,
    };
    let lower = base.to_lowercase();
    let trimmed = lower.trim_start_matches('-');
    trimmed.strip_suffix(".exe").unwrap_or(trimmed).to_string()
}

/// A normalised shell name to its format (`_SHELL_EXE_FORMAT`).
pub(crate) fn shell_format(comm: &str) -> Option<Format> {
    Some(match comm {
        "powershell" | "pwsh" => Format::Powershell,
        "cmd" => Format::Cmd,
        "bash" | "sh" | "zsh" | "dash" | "ksh" => Format::Export,
        "fish" => Format::Fish,
        _ => return None,
    })
}

/// `/proc/<pid>/comm` decoded as ASCII with replacement, stripped (not on
/// the portable path: macOS has no `/proc`, and `ps` answers there).
fn proc_comm(pid: u32) -> Option<String> {
    if crate::platform::portable() {
        return None;
    }
    let bytes = std::fs::read(format!("/proc/{pid}/comm")).ok()?;
    let s: String = bytes
        .iter()
        .map(|&b| if b.is_ascii() { b as char } else { '\u{fffd}' })
        .collect();
    let s = strip(&s).to_string();
    (!s.is_empty()).then_some(s)
}

/// `ps -o comm= -p <pid>`, stripped (strict UTF-8, as `text=True` would be).
fn ps_comm(pid: u32) -> Option<String> {
    let mut cmd = Command::new("ps");
    cmd.args(["-o", "comm=", "-p", &pid.to_string()]);
    let out = crate::process::run_captured(cmd, Duration::from_secs(5), 64 * 1024).ok()?;
    let s = String::from_utf8(out.stdout).ok()?;
    let s = strip(&s).to_string();
    (!s.is_empty()).then_some(s)
}

/// The parent's normalised name from the three sources, in order.
pub(crate) fn parent_comm(
    proc: impl FnOnce() -> Option<String>,
    ps: impl FnOnce() -> Option<String>,
    shell: Option<OsString>,
) -> String {
    if let Some(c) = proc() {
        return norm_comm(&c);
    }
    if let Some(c) = ps() {
        return norm_comm(&c);
    }
    match shell {
        Some(s) if !s.is_empty() => {
            norm_comm(&crate::compat::python::lossy_text(s.as_encoded_bytes()))
        }
        _ => String::new(),
    }
}

pub(crate) fn detect() -> Format {
    let ppid = rustix::process::getppid().map_or(0, |p| p.as_raw_nonzero().get() as u32);
    let comm = parent_comm(
        || proc_comm(ppid),
        || ps_comm(ppid),
        std::env::var_os("SHELL"),
    );
    shell_format(&comm).unwrap_or(Format::Export)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_like_the_reference() {
        assert_eq!(norm_comm(" -FISH\n"), "fish");
        assert_eq!(norm_comm("/usr/bin/Bash"), "bash");
        assert_eq!(norm_comm("C:/Windows/PWSH.EXE"), "pwsh");
        assert_eq!(norm_comm("--zsh"), "zsh");
        assert_eq!(norm_comm("python3"), "python3");
    }

    #[test]
    fn maps_names() {
        for (n, f) in [
            ("powershell", Format::Powershell),
            ("pwsh", Format::Powershell),
            ("cmd", Format::Cmd),
            ("bash", Format::Export),
            ("sh", Format::Export),
            ("zsh", Format::Export),
            ("dash", Format::Export),
            ("ksh", Format::Export),
            ("fish", Format::Fish),
        ] {
            assert_eq!(shell_format(n), Some(f), "{n}");
        }
        assert_eq!(shell_format("tcsh"), None);
        assert_eq!(shell_format("python3"), None);
    }

    #[test]
    fn sources_in_order() {
        let fish = Some(OsString::from("/usr/bin/fish"));
        // /proc answered: $SHELL is not consulted (python3 parent → export).
        assert_eq!(
            parent_comm(|| Some("python3".into()), || panic!(), fish.clone()),
            "python3"
        );
        assert_eq!(parent_comm(|| None, || Some("-fish".into()), None), "fish");
        assert_eq!(parent_comm(|| None, || None, fish), "fish");
        assert_eq!(parent_comm(|| None, || None, Some(OsString::new())), "");
        assert_eq!(parent_comm(|| None, || None, None), "");
    }

    #[test]
    fn detect_never_panics() {
        // The test runner's parent is cargo or a shell; either way a format.
        let _ = detect();
    }
}
