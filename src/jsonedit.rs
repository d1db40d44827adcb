//! Byte-exact editing of a JSON settings file (`init claude`, `init codex`).
//!
//! The file is parsed into a tree that records where each value starts and
//! ends in the text; an edit replaces, inserts or deletes one span and
//! leaves every other byte as it was: the user's whitespace, key order,
//! numbers of any size (`12345678901234567890123` stays that text),
//! escapes, and keys that appear twice in objects `init` does not edit.
//! A key `init` must look into that appears twice (`"hooks"` twice at the
//! top) is ambiguous — Claude Code reads the last one — and the file is
//! refused unchanged, naming the key's line and column.
//!
//! The parser is strict RFC 8259 JSON (no comments, no trailing commas);
//! an error names a line and column, never text of the file.

/// What a value is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, decoded.
    Str(String),
    /// A number, `true`, `false` or `null` (kept as text only).
    Other,
}

/// A value and its byte span `start..end` in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

/// One `"key": value` of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub key: String,
    /// Where the key's opening quote is.
    pub key_start: usize,
    pub value: Node,
}

/// How deep containers may nest.
const MAX_DEPTH: usize = 256;

impl Node {
    /// The members of an object (empty for anything else).
    pub fn members(&self) -> &[Member] {
        match &self.kind {
            Kind::Object(m) => m,
            _ => &[],
        }
    }

    /// The items of an array (empty for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.kind {
            Kind::Array(a) => a,
            _ => &[],
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_object(&self) -> bool {
        matches!(self.kind, Kind::Object(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self.kind, Kind::Array(_))
    }

    /// The value of `key` in an object: `Ok(None)` when absent, `Err` (the
    /// 1-based line and column of the second one) when it appears more
    /// than once.
    pub fn get_unique(&self, text: &str, key: &str) -> Result<Option<(usize, &Node)>, String> {
        let mut found: Option<(usize, &Node)> = None;
        for (i, m) in self.members().iter().enumerate() {
            if m.key == key {
                if found.is_some() {
                    let (l, c) = line_col(text.as_bytes(), m.key_start);
                    return Err(format!(
                        "the key \"{}\" appears twice in one object (again at line {l}, column {c})",
                        key.escape_debug()
                    ));
                }
                found = Some((i, &m.value));
            }
        }
        Ok(found)
    }

    /// The value of `key` (the last one when repeated: what a reader of
    /// the file gets).
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.members()
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }
}

/// Line and column (1-based) of byte `at`.
pub fn line_col(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, before.len() - start + 1)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        let (l, c) = line_col(self.b, self.i);
        format!("not valid JSON: {what} at line {l}, column {c}")
    }

    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Past the opening `{`/`[`: is the container empty (`close` next,
    /// consumed)?
    fn open_is_empty(&mut self, close: u8) -> bool {
        self.i += 1;
        self.ws();
        let empty = self.peek() == Some(close);
        if empty {
            self.i += 1;
        }
        empty
    }

    /// After an object member or array item: a `,` (another follows,
    /// `false`) or `close` (the container ends, `true`), each consumed.
    fn closed_after_item(&mut self, close: u8) -> Result<bool, String> {
        self.ws();
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(true)
            }
            None => Err(self.err("unexpected end")),
            _ => Err(self.err(&format!(
                "syntax error (expected ',' or '{}')",
                close as char
            ))),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.ws();
        let start = self.i;
        let kind = match self.peek() {
            None => return Err(self.err("unexpected end")),
            Some(b'{') => {
                let mut members = Vec::new();
                if !self.open_is_empty(b'}') {
                    loop {
                        self.ws();
                        let key_start = self.i;
                        if self.peek() != Some(b'"') {
                            return Err(self.err(if self.peek().is_none() {
                                "unexpected end"
                            } else {
                                "syntax error (a key must be a string)"
                            }));
                        }
                        let key = self.string()?;
                        self.ws();
                        if self.peek() != Some(b':') {
                            return Err(self.err("syntax error (expected ':')"));
                        }
                        self.i += 1;
                        let value = self.value(depth + 1)?;
                        members.push(Member {
                            key,
                            key_start,
                            value,
                        });
                        if self.closed_after_item(b'}')? {
                            break;
                        }
                    }
                }
                Kind::Object(members)
            }
            Some(b'[') => {
                let mut items = Vec::new();
                if !self.open_is_empty(b']') {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.closed_after_item(b']')? {
                            break;
                        }
                    }
                }
                Kind::Array(items)
            }
            Some(b'"') => Kind::Str(self.string()?),
            Some(b't') => self.literal(b"true")?,
            Some(b'f') => self.literal(b"false")?,
            Some(b'n') => self.literal(b"null")?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.err("syntax error")),
        };
        Ok(Node {
            start,
            end: self.i,
            kind,
        })
    }

    fn literal(&mut self, word: &[u8]) -> Result<Kind, String> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(Kind::Other)
        } else {
            Err(self.err("syntax error"))
        }
    }

    fn digits(&mut self) -> usize {
        let s = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - s
    }

    fn number(&mut self) -> Result<Kind, String> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("syntax error (a number)")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("syntax error (a number)"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("syntax error (a number)"));
            }
        }
        Ok(Kind::Other)
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self
            .b
            .get(self.i..self.i + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.err("syntax error (a \\u escape)"))?;
        self.i += 4;
        Ok(h)
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            let run = self.i;
            while self
                .peek()
                .is_some_and(|c| c != b'"' && c != b'\\' && c >= 0x20)
            {
                self.i += 1;
            }
            // The text was checked to be UTF-8 as a whole; a run between
            // ASCII delimiters is UTF-8 too.
            out.push_str(std::str::from_utf8(&self.b[run..self.i]).expect("UTF-8"));
            match self.peek() {
                None => return Err(self.err("unexpected end")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek().ok_or_else(|| self.err("unexpected end"))?;
                    self.i += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xD800..0xDC00).contains(&hi)
                                && self.b[self.i..].starts_with(b"\\u")
                            {
                                self.i += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    0xFFFD
                                }
                            } else {
                                hi
                            };
                            out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                        }
                        _ => {
                            self.i -= 1;
                            return Err(self.err("syntax error (an escape)"));
                        }
                    }
                }
                Some(_) => return Err(self.err("syntax error (a control character in a string)")),
            }
        }
    }
}

/// Parse `text` (a whole file, no BOM). Whitespace only is an empty
/// object's place: `Ok(None)`.
pub fn parse(text: &str) -> Result<Option<Node>, String> {
    let mut p = Parser {
        b: text.as_bytes(),
        i: 0,
    };
    p.ws();
    if p.i == p.b.len() {
        return Ok(None);
    }
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(p.err("syntax error (text after the value)"));
    }
    Ok(Some(v))
}

/// The file's layout conventions, for inserted text.
#[derive(Debug, Clone)]
pub struct Style {
    /// One level of indentation (`"  "`, `"    "`, `"\t"`).
    pub unit: String,
    /// `"\r\n"` when the file uses CRLF, else `"\n"`.
    pub eol: &'static str,
}

impl Style {
    pub fn of(text: &str) -> Style {
        let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
        // The first indented line that holds a value decides the unit.
        let unit = text
            .lines()
            .filter_map(|l| {
                let trimmed = l.trim_start_matches([' ', '\t']);
                let ws = &l[..l.len() - trimmed.len()];
                (!ws.is_empty() && !trimmed.trim().is_empty()).then(|| ws.to_string())
            })
            .next()
            .unwrap_or_else(|| "  ".to_string());
        Style { unit, eol }
    }
}

/// The indentation of the line `at` is on (its leading blanks).
fn indent_at(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

/// Whether `at` is the first non-blank byte of its line.
fn first_on_line(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..at]
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || b == b'\r')
}

/// `value` as pretty JSON in `style`, its lines after the first indented
/// by `indent`.
pub fn render(value: &serde_json::Value, style: &Style, indent: &str) -> String {
    let pretty = serde_json::to_string_pretty(value).expect("a Value serializes");
    let mut out = String::new();
    for (i, line) in pretty.split('\n').enumerate() {
        if i > 0 {
            out.push_str(style.eol);
            out.push_str(indent);
        }
        let body = line.trim_start_matches(' ');
        let levels = (line.len() - body.len()) / 2;
        for _ in 0..levels {
            out.push_str(&style.unit);
        }
        out.push_str(body);
    }
    out
}

/// `value` rendered on one line (for a container written on one line).
fn render_compact(value: &serde_json::Value) -> String {
    serde_json::to_string(value).expect("a Value serializes")
}

/// Text with `start..end` replaced by `with`.
pub fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    let mut s = String::with_capacity(text.len() + with.len());
    s.push_str(&text[..start]);
    s.push_str(with);
    s.push_str(&text[end..]);
    s
}

/// Insert `piece` (already rendered for the position) as the last entry
/// of `container` (an object member `"key": value` or an array item).
fn insert_last(text: &str, container: &Node, style: &Style, entry: Entry<'_>) -> String {
    let children: Vec<usize> = match &container.kind {
        Kind::Object(m) => m.iter().map(|m| m.key_start).collect(),
        Kind::Array(a) => a.iter().map(|n| n.start).collect(),
        _ => unreachable!("a container"),
    };
    let last_end = match &container.kind {
        Kind::Object(m) => m.last().map(|m| m.value.end),
        Kind::Array(a) => a.last().map(|n| n.end),
        _ => None,
    };
    let close = container.end - 1; // the closing bracket
    match (children.first(), last_end) {
        (Some(&first), Some(last_end)) => {
            if first_on_line(text, first) {
                let indent = indent_at(text, first).to_string();
                let piece = entry.render(style, &indent, false);
                splice(
                    text,
                    last_end,
                    last_end,
                    &format!(",{}{indent}{piece}", style.eol),
                )
            } else {
                let piece = entry.render(style, "", true);
                splice(text, last_end, last_end, &format!(", {piece}"))
            }
        }
        _ => {
            // Empty: `{}` / `[ ]` become a block at one level deeper than
            // the line the container opens on.
            let outer = indent_at(text, container.start).to_string();
            let inner = format!("{outer}{}", style.unit);
            let piece = entry.render(style, &inner, false);
            splice(
                text,
                container.start + 1,
                close,
                &format!("{}{inner}{piece}{}{outer}", style.eol, style.eol),
            )
        }
    }
}

enum Entry<'a> {
    Member(&'a str, &'a serde_json::Value),
    Item(&'a serde_json::Value),
}

impl Entry<'_> {
    fn render(&self, style: &Style, indent: &str, compact: bool) -> String {
        let v = match self {
            Entry::Member(_, v) | Entry::Item(v) => v,
        };
        let body = if compact {
            render_compact(v)
        } else {
            render(v, style, indent)
        };
        match self {
            Entry::Member(k, _) => format!(
                "{}: {body}",
                serde_json::to_string(k).expect("a string serializes")
            ),
            Entry::Item(_) => body,
        }
    }
}

/// Add `"key": value` as the last member of the object `obj`.
pub fn add_member(
    text: &str,
    obj: &Node,
    style: &Style,
    key: &str,
    value: &serde_json::Value,
) -> String {
    insert_last(text, obj, style, Entry::Member(key, value))
}

/// Add `value` as the last item of the array `arr`.
pub fn add_item(text: &str, arr: &Node, style: &Style, value: &serde_json::Value) -> String {
    insert_last(text, arr, style, Entry::Item(value))
}

/// Remove entry `index` of `container` (a member or an item) with its
/// separator and the blanks that led up to it; an emptied container
/// becomes `{}` / `[]`.
pub fn remove_entry(text: &str, container: &Node, index: usize) -> String {
    let spans: Vec<(usize, usize)> = match &container.kind {
        Kind::Object(m) => m.iter().map(|m| (m.key_start, m.value.end)).collect(),
        Kind::Array(a) => a.iter().map(|n| (n.start, n.end)).collect(),
        _ => unreachable!("a container"),
    };
    if spans.len() == 1 {
        return splice(text, container.start + 1, container.end - 1, "");
    }
    if index + 1 < spans.len() {
        // From this entry to the next one.
        let (s, _) = spans[index];
        let (next, _) = spans[index + 1];
        // Keep the indentation in front of this entry for the next one.
        splice(text, s, next, "")
    } else {
        // The last: from the end of the previous one (its comma goes).
        let (_, prev_end) = spans[index - 1];
        let (_, e) = spans[index];
        splice(text, prev_end, e, "")
    }
}

/// Replace a node's text.
pub fn replace(text: &str, node: &Node, with: &str) -> String {
    splice(text, node.start, node.end, with)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(t: &str) -> Node {
        parse(t).unwrap().unwrap()
    }

    #[test]
    fn parses_spans_and_keeps_numbers_as_text() {
        let t = r#"{"n": 12345678901234567890123, "a": [1, "x\u00e9\ud83d\ude00"], "d": 1e400}"#;
        let v = p(t);
        assert_eq!(v.members().len(), 3);
        let n = v.get("n").unwrap();
        assert_eq!(&t[n.start..n.end], "12345678901234567890123");
        assert_eq!(v.get("a").unwrap().items()[1].as_str(), Some("xé😀"));
        assert_eq!(
            &t[v.get("d").unwrap().start..v.get("d").unwrap().end],
            "1e400"
        );
    }

    #[test]
    fn errors_name_line_and_column_only() {
        for (t, want) in [
            ("{\n  \"a\": secretvalue\n}", "line 2, column 8"),
            ("{\"a\": \"x", "unexpected end"),
            ("{\"a\": 1,}", "line 1, column 9"),
            ("[1] x", "text after the value"),
            ("{\"a\": 01}", "line 1, column 8"),
        ] {
            let e = parse(t).unwrap_err();
            assert!(e.contains(want), "{t:?}: {e}");
            assert!(!e.contains("secretvalue"));
        }
        assert_eq!(parse(" \n").unwrap(), None);
    }

    #[test]
    fn duplicate_keys_are_found_where_it_matters() {
        let t = "{\"hooks\": {}, \"x\": 1,\n \"hooks\": {\"a\": 1}}";
        let v = p(t);
        let e = v.get_unique(t, "hooks").unwrap_err();
        assert!(e.contains("line 2, column 2"), "{e}");
        assert!(v.get_unique(t, "x").unwrap().is_some());
        assert_eq!(v.get("hooks").unwrap().members().len(), 1);
    }

    #[test]
    fn insertions_follow_the_files_layout() {
        let t = "{\n    \"b\": {\"n\": 12345678901234567890123},\n    \"a\": []\n}\n";
        let st = Style::of(t);
        assert_eq!(st.unit, "    ");
        let v = p(t);
        let out = add_member(t, &v, &st, "hooks", &json!({"k": [1]}));
        assert_eq!(
            out,
            "{\n    \"b\": {\"n\": 12345678901234567890123},\n    \"a\": [],\n    \"hooks\": {\n        \"k\": [\n            1\n        ]\n    }\n}\n"
        );
        let v = p(&out);
        let a = v.get("a").unwrap();
        let out2 = add_item(&out, a, &st, &json!("x"));
        assert!(out2.contains("\"a\": [\n        \"x\"\n    ],"), "{out2}");
        // One-line containers stay on one line.
        let t = "{\"a\": [1, 2]}";
        let v = p(t);
        assert_eq!(
            add_item(t, v.get("a").unwrap(), &Style::of(t), &json!({"x": 1})),
            "{\"a\": [1, 2, {\"x\":1}]}"
        );
        // An empty file's object.
        let t = "{}";
        assert_eq!(
            add_member(t, &p(t), &Style::of(t), "k", &json!(true)),
            "{\n  \"k\": true\n}"
        );
        // CRLF.
        let t = "{\r\n  \"a\": 1\r\n}\r\n";
        assert_eq!(
            add_member(t, &p(t), &Style::of(t), "b", &json!([2])),
            "{\r\n  \"a\": 1,\r\n  \"b\": [\r\n    2\r\n  ]\r\n}\r\n"
        );
    }

    #[test]
    fn removal_is_the_inverse_of_insertion() {
        for t in [
            "{\n  \"a\": [\n    1\n  ]\n}\n",
            "{\n  \"a\": [\n    1,\n    {\"z\": 2}\n  ],\n  \"n\": 1e400\n}\n",
            "{\"a\": [1, 2]}",
            "{}",
        ] {
            let v = p(t);
            let st = Style::of(t);
            let added = add_member(t, &v, &st, "hooks", &json!({"x": [1, 2]}));
            let v2 = p(&added);
            let i = v2.members().len() - 1;
            let back = remove_entry(&added, &v2, i);
            assert_eq!(back, t);
            // Items too.
            if let Some(a) = v.get("a") {
                let added = add_item(t, a, &st, &json!("new"));
                let a2 = p(&added).get("a").unwrap().clone();
                assert_eq!(remove_entry(&added, &a2, a2.items().len() - 1), t);
            }
        }
        // A middle entry takes its line with it.
        let t = "[\n  1,\n  2,\n  3\n]";
        assert_eq!(remove_entry(t, &p(t), 1), "[\n  1,\n  3\n]");
        assert_eq!(remove_entry(t, &p(t), 0), "[\n  2,\n  3\n]");
    }
}
