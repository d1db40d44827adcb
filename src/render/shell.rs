//! The four shell formats: export (POSIX sh), powershell, cmd and fish.

use super::pystr::escape_with;
use super::{Lines, Prepared};
use crate::compat::ident;
use crate::compat::python::lossy_text;
use crate::compat::sh::dotagents_quote;

/// `export PATH='<prefix>'"${PATH:+:$PATH}"` when `new` is `old` with
/// entries put in front (`new` ends with `:` + `old`, `old` non-empty, and
/// something precedes it), else `None`. Compared on bytes, which is the
/// reference's code-point comparison since `:` is ASCII.
fn prefixed_path_line(new: &[u8], old: &[u8]) -> Option<String> {
    if old.is_empty() || new.len() <= old.len() + 1 {
        return None;
    }
    let split = new.len() - old.len() - 1;
    if new[split] != b':' || &new[split + 1..] != old {
        return None;
    }
    let mut line = String::from("export PATH=");
    dotagents_quote(&mut line, &lossy_text(&new[..split]));
    line.push_str("\"${PATH:+:$PATH}\"");
    Some(line)
}

pub(crate) fn export(p: &Prepared, out: &mut Lines) {
    for (k, v) in &p.assignments {
        if !ident::is_name(k) {
            continue;
        }
        if *k == b"PATH" {
            if let Some(line) = p.diff_base_path.and_then(|old| prefixed_path_line(v, old)) {
                out.line().push_str(&line);
                continue;
            }
        }
        let l = out.line();
        l.push_str("export ");
        l.push_str(&lossy_text(k));
        l.push('=');
        dotagents_quote(l, &lossy_text(v));
    }
    for k in &p.gone {
        if ident::is_name(k) {
            let l = out.line();
            l.push_str("unset ");
            l.push_str(&lossy_text(k));
        }
    }
}

/// PowerShell reads each of these as a single quote; they are doubled.
fn is_ps_quote(c: char) -> bool {
    matches!(c, '\'' | '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}')
}

/// A name `${env:...}` cannot hold.
fn ps_drops(name: &[u8]) -> bool {
    name.iter().any(|b| *b == b'}' || *b == b'`')
}

pub(crate) fn powershell(p: &Prepared, out: &mut Lines) {
    for (k, v) in &p.assignments {
        if ps_drops(k) {
            continue;
        }
        let l = out.line();
        l.push_str("${env:");
        l.push_str(&lossy_text(k));
        l.push_str("} = '");
        escape_with(
            l,
            &lossy_text(v),
            |b| b == b'\'' || b >= 0x80,
            |out, c| {
                out.push(c);
                if is_ps_quote(c) {
                    out.push(c);
                }
            },
        );
        l.push('\'');
    }
    for k in &p.gone {
        if !ps_drops(k) {
            let l = out.line();
            l.push_str("${env:");
            l.push_str(&lossy_text(k));
            l.push_str("} = $null");
        }
    }
}

/// cmd's `set "K=V"` value: `%` → `%%`, `"` → `""`, then CRLF, LF and CR
/// each → one space.
fn cmd_value(out: &mut String, value: &str) {
    let b = value.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        let rep = match b[i] {
            b'%' => "%%",
            b'"' => "\"\"",
            b'\r' | b'\n' => " ",
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&value[start..i]);
        out.push_str(rep);
        if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
            i += 1;
        }
        i += 1;
        start = i;
    }
    out.push_str(&value[start..]);
}

pub(crate) fn cmd(p: &Prepared, out: &mut Lines) {
    for (k, v) in &p.assignments {
        let l = out.line();
        l.push_str("set \"");
        l.push_str(&lossy_text(k));
        l.push('=');
        cmd_value(l, &lossy_text(v));
        l.push('"');
    }
    for k in &p.gone {
        let l = out.line();
        l.push_str("set \"");
        l.push_str(&lossy_text(k));
        l.push_str("=\"");
    }
}

pub(crate) fn fish(p: &Prepared, out: &mut Lines) {
    for (k, v) in &p.assignments {
        if !ident::is_name(k) {
            continue;
        }
        let l = out.line();
        l.push_str("set -gx ");
        l.push_str(&lossy_text(k));
        l.push_str(" '");
        escape_with(
            l,
            &lossy_text(v),
            |b| b == b'\\' || b == b'\'',
            |out, c| match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c => out.push(c),
            },
        );
        l.push('\'');
    }
    for k in &p.gone {
        if ident::is_name(k) {
            let l = out.line();
            l.push_str("set -e ");
            l.push_str(&lossy_text(k));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::render::tests::{diff_view, view};
    use crate::render::{render, Format};

    #[test]
    fn export_quotes_single_and_splices_cr() {
        let v = view(
            &[
                ("A", "it's"),
                ("B", "a\rb"),
                ("C", ""),
                ("D", "$(x) `y` \\ \n\t"),
            ],
            &[],
        );
        assert_eq!(
            render(Format::Export, &v),
            "export A='it'\\''s'\nexport B='a'\"$(printf '\\r')\"'b'\nexport C=''\nexport D='$(x) `y` \\ \n\t'\n"
        );
    }

    #[test]
    fn export_drops_bad_names_and_unsets_after() {
        let v = view(
            &[("A-B", "x"), ("Z", "z"), ("_1", "1")],
            &["GONE", "BAD-GONE", "AA"],
        );
        assert_eq!(
            render(Format::Export, &v),
            "export Z='z'\nexport _1='1'\nunset AA\nunset GONE\n"
        );
    }

    #[test]
    fn export_trailing_newline_name_is_dropped() {
        // Deviation: the reference's `re.match(...$)` would accept "A\n".
        let v = view(&[("A\n", "x")], &["B\n"]);
        assert_eq!(render(Format::Export, &v), "\n");
        assert_eq!(render(Format::Fish, &v), "\n");
        assert_eq!(render(Format::Dotenv, &v), "\n");
    }

    #[test]
    fn export_path_short_form_in_diff_only() {
        let v = diff_view(&[("PATH", "/a:/b:/usr/bin:/bin")], &[], "/usr/bin:/bin");
        assert_eq!(
            render(Format::Export, &v),
            "export PATH='/a:/b'\"${PATH:+:$PATH}\"\n"
        );
        // Same value, full mode: the full line.
        let full = view(&[("PATH", "/a:/b:/usr/bin:/bin")], &[]);
        assert_eq!(
            render(Format::Export, &full),
            "export PATH='/a:/b:/usr/bin:/bin'\n"
        );
        // Not a prefix of the old PATH, an empty old PATH, or nothing in front.
        for (new, old) in [
            ("/a:/bin", "/usr/bin"),
            ("/a", ""),
            (":/bin", "/bin"),
            ("/a/bin", "/bin"),
        ] {
            let v = diff_view(&[("PATH", new)], &[], old);
            assert_eq!(
                render(Format::Export, &v),
                format!("export PATH='{new}'\n"),
                "{new} {old}"
            );
        }
        // A quote in the prefix is quoted.
        let v = diff_view(&[("PATH", "/it's:/bin")], &[], "/bin");
        assert_eq!(
            render(Format::Export, &v),
            "export PATH='/it'\\''s'\"${PATH:+:$PATH}\"\n"
        );
    }

    #[test]
    fn recorded_demo_lines() {
        // dotagents' recorded demo run: GREETING, LOCAL_VAR, TO_REMOVE.
        let v = view(
            &[("GREETING", "hello $world"), ("LOCAL_VAR", "it's local")],
            &["TO_REMOVE"],
        );
        assert_eq!(
            render(Format::Export, &v),
            "export GREETING='hello $world'\nexport LOCAL_VAR='it'\\''s local'\nunset TO_REMOVE\n"
        );
        assert_eq!(
            render(Format::Powershell, &v),
            "${env:GREETING} = 'hello $world'\n${env:LOCAL_VAR} = 'it''s local'\n${env:TO_REMOVE} = $null\n"
        );
        assert_eq!(
            render(Format::Cmd, &v),
            "set \"GREETING=hello $world\"\nset \"LOCAL_VAR=it's local\"\nset \"TO_REMOVE=\"\n"
        );
        assert_eq!(
            render(Format::Fish, &v),
            "set -gx GREETING 'hello $world'\nset -gx LOCAL_VAR 'it\\'s local'\nset -e TO_REMOVE\n"
        );
    }

    #[test]
    fn powershell_doubles_every_single_quote_kind_and_drops_names() {
        let v = view(
            &[
                ("A", "'\u{2018}\u{2019}\u{201a}\u{201b}\"\n`$x"),
                ("B}", "x"),
                ("C`", "y"),
                ("X(86)", "z"),
            ],
            &["D}", "E"],
        );
        assert_eq!(
            render(Format::Powershell, &v),
            "${env:A} = '''\u{2018}\u{2018}\u{2019}\u{2019}\u{201a}\u{201a}\u{201b}\u{201b}\"\n`$x'\n${env:X(86)} = 'z'\n${env:E} = $null\n"
        );
    }

    #[test]
    fn cmd_escapes_and_flattens_newlines() {
        let v = view(
            &[
                ("A", "100% \"q\""),
                ("B", "a\r\nb\nc\rd\n\re"),
                ("X(86):`", ""),
            ],
            &["R-1"],
        );
        assert_eq!(
            render(Format::Cmd, &v),
            "set \"A=100%% \"\"q\"\"\"\nset \"B=a b c d  e\"\nset \"X(86):`=\"\nset \"R-1=\"\n"
        );
    }

    #[test]
    fn fish_escapes_backslash_then_quote() {
        let v = view(&[("A", "a\\'b\n$c"), ("A-B", "x")], &["A-C", "G"]);
        assert_eq!(
            render(Format::Fish, &v),
            "set -gx A 'a\\\\\\'b\n$c'\nset -e G\n"
        );
    }

    #[test]
    fn undecodable_bytes_print_as_question_marks() {
        use std::ffi::OsString;
        use std::os::unix::ffi::OsStringExt;
        let v = crate::render::View::of([(
            OsString::from("A"),
            OsString::from_vec(b"x\xff\xfey".to_vec()),
        )]);
        assert_eq!(render(Format::Export, &v), "export A='x??y'\n");
        assert_eq!(render(Format::Cmd, &v), "set \"A=x??y\"\n");
    }
}
