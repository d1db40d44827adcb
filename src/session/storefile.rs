//! Editing one assignment in a store's plain env file (`agentenv set`).
//!
//! A plain file is bash (sourced under `set -a`, see [`super::native`]), so
//! an edit must leave every other byte as it was and give NAME exactly the
//! new value when bash sources the file. [`set_assignment`] lexes the file
//! just far enough to find statement and word boundaries — blanks,
//! comments, single quotes, double quotes with backslash escapes, escapes
//! outside quotes, line continuations — and then:
//!
//! * each assignment word `NAME=…` of a statement made only of assignments
//!   (optionally after `export`) is replaced by `NAME=<quoted value>`; the
//!   rest of the line (`export `, other assignments, a trailing comment)
//!   stays;
//! * when the file assigns NAME nowhere, the assignment is appended as a
//!   line of its own;
//! * anything else is refused with the line: NAME in any other statement
//!   (`readonly NAME=…`, `NAME=… cmd`), shell code the lexer does not
//!   follow (`;`, `|`, `&`, `(`, `)`, `<`, `>`, a backtick, `$(`), an
//!   unterminated quote, or an append after `exit`/`return`/`exec` (it
//!   would never run).
//!
//! [`quote`] writes the value so bash reads it back byte for byte, in the
//! form the native evaluator also reads where it can (single quotes; double
//! quotes for a value holding `'`); a value no plain file can carry (a NUL
//! byte, which no environment variable can hold) is refused.

/// Why [`set_assignment`] or [`quote`] refused (messages name lines and
/// the variable, never a value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The value holds a NUL byte.
    Nul,
    /// Shell code at this line (1-based) that the editor does not follow.
    Code(u32, &'static str),
    /// NAME is assigned at this line in a statement the editor does not
    /// rewrite.
    Assigned(u32),
    /// A quote opened at this line is never closed.
    Unterminated(u32),
    /// The file leaves early (`exit`, `return`, `exec` at this line) so an
    /// appended assignment would never run.
    LeavesEarly(u32, String),
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::Nul => f.write_str(
                "the value holds a NUL byte, which no environment variable can carry",
            ),
            EditError::Code(l, what) => write!(
                f,
                "line {l} holds shell code ({what}) that set does not rewrite"
            ),
            EditError::Assigned(l) => write!(
                f,
                "line {l} sets the variable in a statement that set does not rewrite (only NAME=… and export NAME=… lines are)"
            ),
            EditError::Unterminated(l) => write!(f, "the quote opened at line {l} is never closed"),
            EditError::LeavesEarly(l, w) => write!(
                f,
                "line {l} runs '{w}', so an assignment appended after it would never run"
            ),
        }
    }
}

/// `value` as one shell word bash reads back exactly: `'…'`; a value
/// holding `'` but none of `" $ \` and the backtick as `"…"`; otherwise
/// `'…'\''…'`. A NUL byte is refused.
pub fn quote(value: &[u8]) -> Result<Vec<u8>, EditError> {
    if value.contains(&0) {
        return Err(EditError::Nul);
    }
    if value.contains(&b'\'')
        && !value
            .iter()
            .any(|b| matches!(b, b'"' | b'$' | b'\\' | b'`'))
    {
        let mut out = Vec::with_capacity(value.len() + 2);
        out.push(b'"');
        out.extend_from_slice(value);
        out.push(b'"');
        return Ok(out);
    }
    Ok(crate::compat::sh::single_quote(value))
}

/// One word: its byte span in the file and the line it starts on.
struct Word {
    start: usize,
    end: usize,
    line: u32,
}

/// One statement: its words (never empty).
struct Statement {
    words: Vec<Word>,
}

/// Split `text` into statements, or say where the lexer stops following.
fn lex(text: &[u8]) -> Result<Vec<Statement>, EditError> {
    let n = text.len();
    let mut i = 0usize;
    let mut line: u32 = 1;
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    while i < n {
        let c = text[i];
        match c {
            b' ' | b'\t' => i += 1,
            b'\n' => {
                i += 1;
                line += 1;
                if !words.is_empty() {
                    out.push(Statement {
                        words: std::mem::take(&mut words),
                    });
                }
            }
            b'#' => {
                while i < n && text[i] != b'\n' {
                    i += 1;
                }
            }
            _ => {
                let start = i;
                let start_line = line;
                while i < n {
                    match text[i] {
                        b' ' | b'\t' | b'\n' => break,
                        b'\'' => {
                            let open = line;
                            let close = text[i + 1..]
                                .iter()
                                .position(|&b| b == b'\'')
                                .ok_or(EditError::Unterminated(open))?;
                            line += count_lf(&text[i + 1..i + 1 + close]);
                            i += close + 2;
                        }
                        b'"' => {
                            let open = line;
                            i += 1;
                            loop {
                                match text.get(i) {
                                    None => return Err(EditError::Unterminated(open)),
                                    Some(b'"') => {
                                        i += 1;
                                        break;
                                    }
                                    Some(b'\\') => {
                                        if text.get(i + 1) == Some(&b'\n') {
                                            line += 1;
                                        }
                                        i += 2;
                                    }
                                    Some(b'`') => return Err(EditError::Code(line, "a backtick")),
                                    Some(b'$') if text.get(i + 1) == Some(&b'(') => {
                                        return Err(EditError::Code(line, "$(…)"))
                                    }
                                    Some(b'\n') => {
                                        line += 1;
                                        i += 1;
                                    }
                                    Some(_) => i += 1,
                                }
                            }
                        }
                        b'\\' => {
                            if text.get(i + 1) == Some(&b'\n') {
                                line += 1;
                            }
                            i += 2;
                        }
                        b'$' if text.get(i + 1) == Some(&b'(') => {
                            return Err(EditError::Code(line, "$(…)"))
                        }
                        b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>' | b'`' => {
                            return Err(EditError::Code(line, operator_name(text[i])))
                        }
                        _ => i += 1,
                    }
                }
                words.push(Word {
                    start,
                    end: i.min(n),
                    line: start_line,
                });
                i = i.min(n);
            }
        }
    }
    if !words.is_empty() {
        out.push(Statement { words });
    }
    Ok(out)
}

fn count_lf(b: &[u8]) -> u32 {
    b.iter().filter(|&&c| c == b'\n').count() as u32
}

fn operator_name(c: u8) -> &'static str {
    match c {
        b';' => "';'",
        b'&' => "'&'",
        b'|' => "'|'",
        b'(' | b')' => "a parenthesis",
        b'<' | b'>' => "a redirection",
        _ => "a backtick",
    }
}

/// Is `word` (raw bytes) an assignment to some name (`IDENT=` first)?
fn is_assignment(word: &[u8]) -> bool {
    match word.iter().position(|&b| b == b'=') {
        Some(eq) => crate::compat::ident::is_name(&word[..eq]),
        None => false,
    }
}

/// A statement that names `prefix` (`NAME=`) is edited only when every
/// word of its `body` is an assignment (or, after `export`, a name); else
/// the line of the word naming it, refused.
fn assignments_only(
    text: &[u8],
    st: &Statement,
    body: &[Word],
    prefix: &[u8],
    export: bool,
) -> Result<(), EditError> {
    let raw = |w: &Word| &text[w.start..w.end];
    let all_assign = !body.is_empty()
        && body.iter().all(|w| {
            let r = raw(w);
            is_assignment(r) || (export && crate::compat::ident::is_name(r))
        });
    if all_assign {
        return Ok(());
    }
    let l = st
        .words
        .iter()
        .find(|w| raw(w).starts_with(prefix))
        .map(|w| w.line)
        .unwrap_or(st.words[0].line);
    Err(EditError::Assigned(l))
}

/// `text` with NAME set to `value` (see the module docs): every plain
/// assignment of NAME replaced in place, or one line appended. `name`
/// must be an identifier (the caller checks).
pub fn set_assignment(text: &[u8], name: &str, value: &[u8]) -> Result<Vec<u8>, EditError> {
    let quoted = quote(value)?;
    let mut new_word = name.as_bytes().to_vec();
    new_word.push(b'=');
    new_word.extend_from_slice(&quoted);
    let mut prefix = name.as_bytes().to_vec();
    prefix.push(b'=');

    let statements = lex(text)?;
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut leaves: Option<(u32, String)> = None;
    for st in &statements {
        let raw = |w: &Word| &text[w.start..w.end];
        let first = raw(&st.words[0]);
        let body = if first == b"export" {
            &st.words[1..]
        } else {
            &st.words[..]
        };
        let mentions = st.words.iter().any(|w| raw(w).starts_with(&prefix));
        let checked = assignments_only(text, st, body, &prefix, first == b"export");
        let all_assign = checked.is_ok();
        if mentions {
            checked?;
            for w in body {
                if raw(w).starts_with(&prefix) {
                    spans.push((w.start, w.end));
                }
            }
        }
        if leaves.is_none() && !all_assign && matches!(first, b"exit" | b"return" | b"exec") {
            leaves = Some((
                st.words[0].line,
                String::from_utf8_lossy(first).into_owned(),
            ));
        }
    }
    let mut out = Vec::with_capacity(text.len() + new_word.len() + 1);
    if spans.is_empty() {
        if let Some((l, w)) = leaves {
            return Err(EditError::LeavesEarly(l, w));
        }
        out.extend_from_slice(text);
        if !text.is_empty() && !text.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(&new_word);
        out.push(b'\n');
        return Ok(out);
    }
    let mut at = 0;
    for (s, e) in spans {
        out.extend_from_slice(&text[at..s]);
        out.extend_from_slice(&new_word);
        at = e;
    }
    out.extend_from_slice(&text[at..]);
    Ok(out)
}

/// `text` without NAME's plain assignments (`import --to`): a statement
/// that is only `NAME=…` (or `export NAME=…`) goes with its line when
/// nothing else shares the line, else the word goes with the blanks
/// after it; every other byte is kept. `Ok(None)` when NAME has no plain
/// assignment; refused like [`set_assignment`] when NAME is assigned in
/// a way the lexer does not follow.
pub fn remove_assignment(text: &[u8], name: &str) -> Result<Option<Vec<u8>>, EditError> {
    let mut prefix = name.as_bytes().to_vec();
    prefix.push(b'=');
    let statements = lex(text)?;
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for st in &statements {
        let raw = |w: &Word| &text[w.start..w.end];
        let first = raw(&st.words[0]);
        let export = first == b"export";
        let body = if export {
            &st.words[1..]
        } else {
            &st.words[..]
        };
        if !st.words.iter().any(|w| raw(w).starts_with(&prefix)) {
            continue;
        }
        assignments_only(text, st, body, &prefix, export)?;
        let blank = |b: u8| b == b' ' || b == b'\t';
        if body.len() == 1 {
            let (s, e) = (st.words[0].start, body[0].end);
            let line_start = text[..s]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let mut end = e;
            while end < text.len() && blank(text[end]) {
                end += 1;
            }
            let alone_before = text[line_start..s].iter().all(|&b| blank(b));
            let alone_after = end == text.len() || matches!(text[end], b'\n' | b'#');
            if alone_before && alone_after {
                let line_end = text[end..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(text.len(), |i| end + i + 1);
                cuts.push((line_start, line_end));
                continue;
            }
            // It shares its line: cut the statement and the blanks after it.
            cuts.push((s, end));
            continue;
        }
        for w in body {
            if raw(w).starts_with(&prefix) {
                let mut end = w.end;
                while end < text.len() && blank(text[end]) {
                    end += 1;
                }
                cuts.push((w.start, end));
            }
        }
    }
    if cuts.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for (s, e) in cuts {
        out.extend_from_slice(&text[at..s]);
        at = e;
    }
    out.extend_from_slice(&text[at..]);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str, value: &str) -> Result<String, EditError> {
        set_assignment(text.as_bytes(), "TOKEN", value.as_bytes())
            .map(|b| String::from_utf8(b).unwrap())
    }

    /// What bash gives TOKEN after sourcing `text`.
    fn bash_value(text: &[u8]) -> Option<Vec<u8>> {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("env");
        std::fs::write(&f, text).unwrap();
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg("set -a; . \"$1\" >/dev/null 2>&1; printf %s \"$TOKEN\"")
            .arg("bash")
            .arg(&f)
            .env_clear()
            .output()
            .expect("bash (the plain files' interpreter) runs");
        Some(out.stdout)
    }

    #[test]
    fn replaces_in_place_and_keeps_every_other_byte() {
        let text = "# my keys\nA=1\nTOKEN=old # the token\n\nexport B='x y'\n";
        assert_eq!(
            set(text, "new").unwrap(),
            "# my keys\nA=1\nTOKEN='new' # the token\n\nexport B='x y'\n"
        );
        assert_eq!(
            set("export TOKEN=\"a\nb\"\nC=2\n", "v").unwrap(),
            "export TOKEN='v'\nC=2\n"
        );
        assert_eq!(
            set("A=1 TOKEN=2 C=3\n", "v").unwrap(),
            "A=1 TOKEN='v' C=3\n"
        );
        // Every plain assignment of the name: the last one wins in bash.
        assert_eq!(
            set("TOKEN=1\nTOKEN=2\n", "v").unwrap(),
            "TOKEN='v'\nTOKEN='v'\n"
        );
        // A longer name is another variable.
        assert_eq!(set("TOKENS=1\n", "v").unwrap(), "TOKENS=1\nTOKEN='v'\n");
    }

    #[test]
    fn appends_when_absent() {
        assert_eq!(set("", "v").unwrap(), "TOKEN='v'\n");
        assert_eq!(set("A=1", "v").unwrap(), "A=1\nTOKEN='v'\n");
        assert_eq!(
            set("# c\nA=\"q\\\"x\"\n", "v").unwrap(),
            "# c\nA=\"q\\\"x\"\nTOKEN='v'\n"
        );
        assert_eq!(
            set("echo hi\nexit 0\n", "v"),
            Err(EditError::LeavesEarly(2, "exit".into()))
        );
    }

    #[test]
    fn refuses_what_it_does_not_follow() {
        assert_eq!(set("A=$(date)\n", "v"), Err(EditError::Code(1, "$(…)")));
        assert_eq!(set("A=1\nB=2; C=3\n", "v"), Err(EditError::Code(2, "';'")));
        assert_eq!(set("A='open\n", "v"), Err(EditError::Unterminated(1)));
        assert_eq!(
            set("A=1\nreadonly TOKEN=1\n", "v"),
            Err(EditError::Assigned(2))
        );
        assert_eq!(set("TOKEN=1 cmd\n", "v"), Err(EditError::Assigned(1)));
        assert_eq!(set("A=1\n", "a\0b"), Err(EditError::Nul));
    }

    #[test]
    fn quote_is_read_back_exactly_by_bash() {
        let values: &[&[u8]] = &[
            b"plain",
            b"it's",
            b"it's \"$HOME\" \\ `x`",
            b"sp ace\ttab",
            b"$HOME",
            b"\xff\xfe bytes",
            b"!hist",
            b"",
            b"'",
            b"''\\'",
        ];
        for v in values {
            let text = set_assignment(b"A=1\nTOKEN=old\n", "TOKEN", v).unwrap();
            assert_eq!(bash_value(&text).unwrap(), v.to_vec(), "{:?}", v);
        }
    }

    #[test]
    fn quoted_values_the_native_evaluator_reads_agree_with_bash() {
        use crate::session::native::{evaluate, Outcome};
        let mut env = crate::core::Env::new();
        env.insert("PATH".into(), "/usr/bin:/bin".into());
        for v in ["plain", "it's", "a b"] {
            let text = set_assignment(b"", "TOKEN", v.as_bytes()).unwrap();
            match evaluate(&text, &env) {
                Outcome::Applied(cs) => {
                    assert_eq!(cs.get("TOKEN"), Some(std::ffi::OsStr::new(v)), "{v}");
                }
                other => panic!("{v}: {other:?}"),
            }
        }
    }

    #[test]
    fn remove_keeps_every_other_byte() {
        let rm = |t: &str| {
            remove_assignment(t.as_bytes(), "TOKEN")
                .map(|o| o.map(|b| String::from_utf8(b).unwrap()))
        };
        assert_eq!(
            rm("# keys\nA=1\nTOKEN='x y' # old\n\nexport B=2\n")
                .unwrap()
                .unwrap(),
            "# keys\nA=1\n\nexport B=2\n"
        );
        assert_eq!(
            rm("export TOKEN=\"a\nb\"\nC=2\n").unwrap().unwrap(),
            "C=2\n"
        );
        assert_eq!(rm("A=1 TOKEN=2 C=3\n").unwrap().unwrap(), "A=1 C=3\n");
        assert_eq!(rm("A=1\nTOKEN=9").unwrap().unwrap(), "A=1\n");
        assert_eq!(rm("TOKENS=1\n").unwrap(), None);
        assert_eq!(rm("TOKEN=1 cmd\n"), Err(EditError::Assigned(1)));
    }
}
