//! `--into FILE`: write the rendering as one owned block of a file.
//!
//! As `dotagents env --into`: every earlier block between a line whose trimmed
//! text is `: dotagents-env-begin` and the next whose trimmed text is `:
//! dotagents-env-end` is removed (an end marker outside a block is an ordinary
//! line; a begin without an end swallows the rest), every other line is kept
//! in order, and the new block — the markers around every non-empty line of
//! the rendering — goes at the end. Lines are joined by LF with a final LF;
//! CRLF in the existing file is read as LF.
//!
//! One deliberate difference: lines are split on LF only. The reference
//! uses Python's `splitlines`, which also breaks at CR, VT, FF, `\x1c`–`\x1e`,
//! U+0085, U+2028 and U+2029, so a value containing one of them is split in
//! two and re-joined with LF (the written value differs from the assembled
//! one); here such characters stay inside their line and the value survives.
//! (A lone CR is kept too; only CR immediately before LF is dropped.)
//!
//! The markers are `:` no-op commands rather than comments so that a
//! harness that inlines the file and appends `; cmd` to its last line still
//! runs the command.

use crate::fsutil::{write_atomic, Mode};
use std::io;
use std::path::Path;

pub const BEGIN: &str = ": dotagents-env-begin";
pub const END: &str = ": dotagents-env-end";

/// Split on LF only; a trailing LF ends the last line (no empty line after
/// it); a CR right before an LF belongs to the line ending.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let empty = text.is_empty();
    body.split('\n')
        .filter(move |_| !empty)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// The new content of a file that held `existing`, with `rendered` as its
/// owned block.
pub fn rewrite(existing: &str, rendered: &str) -> String {
    let mut out = String::with_capacity(existing.len() + rendered.len() + 64);
    let mut inside = false;
    for line in lines(existing) {
        let t = line.trim();
        if t == BEGIN {
            inside = true;
        } else if t == END && inside {
            inside = false;
        } else if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(BEGIN);
    out.push('\n');
    for line in rendered.split('\n').filter(|l| !l.is_empty()) {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(END);
    out.push('\n');
    out
}

/// Largest existing `--into` file rewritten.
pub const MAX_INTO_FILE: u64 = 16 << 20;

/// Rewrite `path` with `rendered` as its owned block: atomically, through
/// symlinks (not through another user's link in a sticky world-writable
/// directory: [`crate::fsutil::resolve_target`]), creating parent
/// directories `0700`. A new file is `0600`; an existing one keeps its mode
/// (a warning names it when others can read it) unless someone else owns
/// it ([`Mode::Private`]). A missing file counts as empty; an existing file
/// that is not UTF-8 is an `InvalidData` error and is left untouched.
pub fn write_into(path: &Path, rendered: &str) -> io::Result<()> {
    // Refuse a foreign link before reading through it.
    let target = crate::fsutil::resolve_target(path)?;
    // A FIFO, device or socket is refused before any read or write (a
    // FIFO's reader would get the values; /dev/zero never ends); a huge
    // file by the size limit.
    crate::fsutil::refuse_special_target(&target)?;
    let existing = match crate::fsutil::read_regular(&target, MAX_INTO_FILE) {
        Ok(b) => String::from_utf8(b)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    write_atomic(
        &target,
        rewrite(&existing, rendered).as_bytes(),
        Mode::Private,
        true,
    )
}

/// [`write_into`] for `--into FILE`, its failure as the command says it
/// (the path and the error's kind; an existing file that is not UTF-8
/// said so).
pub(crate) fn write_into_file(path: &Path, rendered: &str) -> Result<(), String> {
    write_into(path, rendered).map_err(|e| {
        let why = if e.kind() == io::ErrorKind::InvalidData {
            "it is not UTF-8".to_string()
        } else {
            crate::fsutil::io_kind(&e)
        };
        format!("--into {}: cannot write it ({why})", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_device_or_fifo_target_is_refused_not_read_or_written() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        for t in [Path::new("/dev/zero"), Path::new("/dev/full"), &fifo] {
            let e = write_into(t, "export A='1'\n").unwrap_err();
            assert_eq!(
                crate::fsutil::input_error(&e),
                Some(crate::fsutil::InputError::NotRegularTarget)
            );
        }
    }

    #[test]
    fn new_file_gets_one_block() {
        assert_eq!(
            rewrite("", "export A='1'\n"),
            ": dotagents-env-begin\nexport A='1'\n: dotagents-env-end\n"
        );
    }

    #[test]
    fn old_blocks_removed_other_lines_kept_in_order() {
        let old = "x=1\n: dotagents-env-begin\nexport OLD='o'\n: dotagents-env-end\ny=2\n  : dotagents-env-begin  \nexport OLD2='p'\n\t: dotagents-env-end\nz=3";
        assert_eq!(
            rewrite(old, "export N='n'\n"),
            "x=1\ny=2\nz=3\n: dotagents-env-begin\nexport N='n'\n: dotagents-env-end\n"
        );
    }

    #[test]
    fn stray_end_is_kept_and_open_begin_swallows_rest() {
        assert_eq!(
            rewrite(
                ": dotagents-env-end\na\n: dotagents-env-begin\nb\nc\n",
                "X\n"
            ),
            ": dotagents-env-end\na\n: dotagents-env-begin\nX\n: dotagents-env-end\n"
        );
    }

    #[test]
    fn empty_rendered_lines_dropped_and_crlf_read_as_lf() {
        assert_eq!(
            rewrite("keep\r\nme\r\n", "\nexport A='1'\n\nunset B\n"),
            "keep\nme\n: dotagents-env-begin\nexport A='1'\nunset B\n: dotagents-env-end\n"
        );
    }

    #[test]
    fn split_on_lf_only() {
        // The reference would break these values at U+2028, VT, FF, NEL.
        let r = "export A='x\u{2028}y\u{b}z\u{c}w\u{85}v\rq'\n";
        let out = rewrite("k\u{2028}eep\n", r);
        assert_eq!(
            out,
            format!("k\u{2028}eep\n{BEGIN}\nexport A='x\u{2028}y\u{b}z\u{c}w\u{85}v\rq'\n{END}\n")
        );
        // An empty line inside a multi-line value is still dropped, as in
        // the reference (the block holds non-empty lines only).
        assert_eq!(
            rewrite("", "export A='a\n\nb'\n"),
            format!("{BEGIN}\nexport A='a\nb'\n{END}\n")
        );
    }

    #[test]
    fn idempotent() {
        let once = rewrite("a\n", "export A='1'\n");
        assert_eq!(rewrite(&once, "export A='1'\n"), once);
    }

    #[test]
    fn writes_file_keeps_mode_creates_parents_and_follows_symlink() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/dir/env.sh");
        write_into(&p, "export A='1'\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{BEGIN}\nexport A='1'\n{END}\n")
        );
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&p, &link).unwrap();
        write_into(&link, "export B='2'\n").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            format!("{BEGIN}\nexport B='2'\n{END}\n")
        );
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }

    #[test]
    fn non_utf8_file_is_untouched() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"\xff\n").unwrap();
        let e = write_into(&p, "export A='1'\n").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(std::fs::read(&p).unwrap(), b"\xff\n");
    }
}
