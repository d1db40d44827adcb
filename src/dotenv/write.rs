//! A writer for the grammar: `KEY=…` lines that [`super::parse`] reads
//! back exactly.

use super::scan::{ends_with_ws, trim};

fn valid_key(key: &str) -> bool {
    crate::compat::ident::is_name(key.as_bytes())
}

/// For each occurrence of `q` in `v`: is the run of backslashes right
/// before it odd (so the closing-quote search skips it)? And is the run of
/// backslashes at the very end even (so it does not skip the closing
/// quote)? That is exactly when `q…q` around `v` closes at the end.
fn verbatim_closes(v: &str, q: u8) -> bool {
    let mut run = 0usize;
    for &c in v.as_bytes() {
        if c == b'\\' {
            run += 1;
            continue;
        }
        if c == q && run.is_multiple_of(2) {
            return false;
        }
        run = 0;
    }
    run.is_multiple_of(2)
}

/// `'v'`: verbatim. Needs: no CR (normalised to LF), the quote rule of
/// [`verbatim_closes`], and, when `v` spans lines, no whitespace at the
/// end of its first line (the opening line is trimmed before continuing).
fn single(v: &str) -> Option<String> {
    if v.contains('\r') || !verbatim_closes(v, b'\'') {
        return None;
    }
    if let Some(p) = v.find('\n') {
        if ends_with_ws(&v[..p]) {
            return None;
        }
    }
    Some(format!("'{v}'"))
}

/// `` `v` ``: verbatim, one line only.
fn backtick(v: &str) -> Option<String> {
    if v.contains(['\r', '\n']) || !verbatim_closes(v, b'`') {
        return None;
    }
    Some(format!("`{v}`"))
}

/// `"…"`: LF as `\n`, CR as `\r`, `"` as `\"`. The decoder has no escape
/// for a backslash, so: a backslash followed by `n` or `r` cannot be
/// written (it would decode to LF/CR); a run of backslashes before a `"`
/// must be even (the run plus the escaping backslash must be odd for the
/// closing-quote search to skip the quote); and a run at the end must be
/// even (an odd one would skip the closing quote).
fn double(v: &str) -> Option<String> {
    let b = v.as_bytes();
    let mut out = String::with_capacity(v.len() + 8);
    out.push('"');
    let mut run = 0usize;
    for (i, ch) in v.char_indices() {
        match ch {
            '\\' => {
                if matches!(b.get(i + 1), Some(b'n' | b'r')) {
                    return None;
                }
                run += 1;
                out.push('\\');
                continue;
            }
            '"' => {
                if !run.is_multiple_of(2) {
                    return None;
                }
                out.push_str("\\\"");
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
        run = 0;
    }
    if !run.is_multiple_of(2) {
        return None;
    }
    out.push('"');
    Some(out)
}

/// Write `KEY=VALUE` so that [`parse`](super::parse) reads back exactly
/// `value`, or `None` when the grammar cannot carry it.
///
/// The line is self-contained: followed by further lines, it neither
/// swallows them nor changes their meaning. Candidates, first that works:
///
/// 1. unquoted `KEY=value` (when it reads back as is: no leading or
///    trailing whitespace, no whitespace followed by `#`, no CR, no LF, no
///    leading quote — or a leading quote that closes with literal trailing
///    text, which the grammar keeps as written);
/// 2. `'value'` (verbatim);
/// 3. `"value"` with `\n`, `\r`, `\"` escapes (the only form that can carry
///    a CR);
/// 4. `` `value` `` (verbatim, one line);
/// 5. for a value starting with a quote that cannot close as written:
///    `KEY=value #<quote>x` (the quote closes after the comment mark, the
///    trailer is literal text, and the unquoted rule cuts at ` #`).
///
/// Every candidate is checked by parsing it before it is returned.
///
/// `None` means no form can carry the value:
/// - `key` is not `[A-Za-z_][A-Za-z0-9_]*`;
/// - `value` contains NUL (the parser cuts a value at NUL);
/// - or every form fails (candidate 5 needs what candidate 1 needs, apart
///   from the closing quote). Each quote kind fails for a reason that follows
///   from the decode rules: the closing quote is the first one not skipped
///   by a backslash, so a verbatim form (`'…'`, `` `…` ``) cannot hold its
///   own quote after an even run of backslashes (including none) nor end
///   in an odd run of backslashes; `'…'` cannot hold CR (normalised to LF)
///   nor whitespace just before its first LF (the opening line is trimmed);
///   `` `…` `` cannot span lines; `"…"` has no escape for a backslash, so it
///   cannot hold a backslash followed by `n` or `r`, an odd run of
///   backslashes before `"`, or at the end. Example: `'` + `\n` (backslash,
///   n) + LF: unquoted fails (leading quote that never closes), `'…'`
///   fails (the bare `'`), `"…"` fails (backslash-n), backticks fail (LF).
pub fn write_value(key: &str, value: &str) -> Option<String> {
    if !valid_key(key) || value.contains('\0') {
        return None;
    }
    let candidates = [
        plain(value),
        single(value),
        double(value),
        backtick(value),
        commented(value),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(|enc| format!("{key}={enc}"))
        .find(|line| reads_back(line, key, value))
}

/// The unquoted candidate, pre-filtered cheaply; [`reads_back`] decides.
fn plain(v: &str) -> Option<String> {
    if v.contains('\r') || trim(v).len() != v.len() {
        return None;
    }
    let starts_quoted = matches!(v.as_bytes().first(), Some(b'"' | b'\'' | b'`'));
    if v.contains('\n') && !starts_quoted {
        return None;
    }
    Some(v.to_owned())
}

/// Last resort for a value that starts with a quote which cannot close
/// as written: append ` #` and a closing quote with literal text after it.
/// The quote search then closes on that quote, the trailer is not a
/// comment, so the whole raw text goes to the unquoted rule, which cuts it
/// at the ` #` — leaving exactly the value. (`"\` is written `"\ #"x`.)
fn commented(v: &str) -> Option<String> {
    let q = *v.as_bytes().first()?;
    if !matches!(q, b'"' | b'\'' | b'`') {
        return None;
    }
    let mut s = plain(v)?;
    s.push_str(" #");
    s.push(q as char);
    s.push('x');
    Some(s)
}

/// Does `line`, followed by another assignment, parse to exactly
/// `key=value` and that assignment, with no error?
fn reads_back(line: &str, key: &str, value: &str) -> bool {
    let probe = if key == "A" { "B" } else { "A" };
    let text = format!("{line}\n{probe}=1\n");
    let p = super::parse(&text);
    p.entries.len() == 2
        && p.entries[0].key == key
        && p.entries[0].value == value
        && p.entries[1].key == probe
        && p.entries[1].value == "1"
        && !p.diagnostics.iter().any(|d| d.is_error)
}
