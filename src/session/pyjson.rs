//! The `env.py` output protocol's JSON, exactly as CPython 3.11's `json`
//! module reads it (the reference parses with `json.loads`): `NaN`,
//! `Infinity` and `-Infinity` are numbers, duplicate keys keep the first
//! position and the last value, lone surrogate escapes are kept, control
//! characters in strings are errors. Text is a sequence of code points in
//! which undecodable stdout bytes are lone surrogates (`surrogateescape`).
//!
//! Error messages are Python's (`Expecting value: line 1 column 1 (char 0)`)
//! and never contain input text.

use indexmap::IndexMap;
use std::time::Instant;

/// A code point sequence; values `0xD800..=0xDFFF` are lone surrogates.
pub type Text = Vec<u32>;

/// A parsed JSON value (containers below the top level keep only their kind).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool,
    Int,
    Float,
    Str(Text),
    List,
    Dict(Vec<(Text, Value)>),
}

impl Value {
    /// Python's `type(value).__name__`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool => "bool",
            Value::Int => "int",
            Value::Float => "float",
            Value::Str(_) => "str",
            Value::List => "list",
            Value::Dict(_) => "dict",
        }
    }
}

/// A parse failure. `decode` is `true` for `json.JSONDecodeError` (as
/// opposed to a plain `ValueError`, e.g. an over-long integer); `timeout`
/// when the deadline passed while parsing (see [`loads_within`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Error {
    pub message: String,
    pub decode: bool,
    pub timeout: bool,
    /// More values than the budget allowed (see [`MAX_OUTPUT_VALUES`]).
    pub too_many: bool,
}

/// Decode bytes as UTF-8 with `surrogateescape`.
pub use crate::compat::python::decode_surrogateescape as decode;

/// `true` when the text has no lone surrogate (Python: encodable as UTF-8).
pub fn is_utf8(t: &[u32]) -> bool {
    !t.iter().any(|c| (0xD800..=0xDFFF).contains(c))
}

/// Encode text without surrogates as UTF-8 bytes.
pub fn encode(t: &[u32]) -> Vec<u8> {
    let s: String = t.iter().filter_map(|c| char::from_u32(*c)).collect();
    s.into_bytes()
}

use crate::compat::python::{splitlines_codes as splitlines, strip_codes as strip};

/// `json.loads(text)` (the tests' shorthand for [`loads_until`] without a
/// deadline).
#[cfg(test)]
pub fn loads(text: &[u32]) -> Result<Value, Error> {
    loads_until(text, None)
}

/// `json.loads(text)` that gives up with a `timeout` error once `deadline` has
/// passed (checked every [`CHECK_EVERY`] values, so the cost is nil).
#[cfg(test)]
pub fn loads_until(text: &[u32], deadline: Option<Instant>) -> Result<Value, Error> {
    let mut unbounded = usize::MAX;
    loads_within(text, deadline, &mut unbounded)
}

/// `json.loads(text)` within `deadline` (a `timeout` error once it passed, checked every [`CHECK_EVERY`] values) that parses at most `budget` values (taken off it; a
/// `too_many` error past it).
pub fn loads_within(
    text: &[u32],
    deadline: Option<Instant>,
    budget: &mut usize,
) -> Result<Value, Error> {
    let mut p = Parser {
        s: text,
        depth: 0,
        deadline,
        steps: 0,
        // The top-level value (the object itself) is free.
        budget: budget.saturating_add(1),
    };
    let i = p.ws(0);
    let r = p.value(i);
    *budget = p.budget;
    let (v, end) = r?;
    let end = p.ws(end);
    if end != text.len() {
        return Err(p.err("Extra data", end));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u32],
    depth: usize,
    deadline: Option<Instant>,
    steps: u32,
    /// Values still allowed.
    budget: usize,
}

/// How many values are parsed between two looks at the clock.
pub const CHECK_EVERY: u32 = 4096;

fn timed_out() -> Error {
    Error {
        message: "timed out while parsing".into(),
        timeout: true,
        ..Default::default()
    }
}

fn too_many() -> Error {
    Error {
        message: format!("more than {MAX_OUTPUT_VALUES} values"),
        too_many: true,
        ..Default::default()
    }
}

/// The most JSON values (a key's value, an element of a list, nested ones
/// included; not the objects the output is made of) one `env.py` output
/// may hold. Far above any real environment
/// (and above what `execve` can pass: every variable costs at least 11
/// bytes of its at most 6 MiB); it bounds the memory and the time spent on
/// an output after the child exited (1.1 million keys took 790 MB and 17 s).
pub const MAX_OUTPUT_VALUES: usize = 100_000;

const MAX_DEPTH: usize = 900;
const MAX_INT_DIGITS: usize = 4300;

impl Parser<'_> {
    fn at(&self, i: usize) -> Option<u32> {
        self.s.get(i).copied()
    }

    fn ws(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(0x20 | 0x09 | 0x0A | 0x0D)) {
            i += 1;
        }
        i
    }

    fn err(&self, msg: &str, pos: usize) -> Error {
        let pos = pos.min(self.s.len());
        let before = &self.s[..pos];
        let line = before.iter().filter(|c| **c == 0x0A).count() + 1;
        let col = match before.iter().rposition(|c| *c == 0x0A) {
            Some(nl) => pos - nl,
            None => pos + 1,
        };
        Error {
            message: format!("{msg}: line {line} column {col} (char {pos})"),
            decode: true,
            ..Default::default()
        }
    }

    fn lit(&self, i: usize, word: &str) -> bool {
        let w: Vec<u32> = word.chars().map(|c| c as u32).collect();
        self.s.len() >= i + w.len() && self.s[i..i + w.len()] == w[..]
    }

    fn value(&mut self, i: usize) -> Result<(Value, usize), Error> {
        if self.budget == 0 {
            return Err(too_many());
        }
        self.budget -= 1;
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(CHECK_EVERY)
            && self.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return Err(timed_out());
        }
        let Some(c) = self.at(i) else {
            return Err(self.err("Expecting value", i));
        };
        match c {
            0x22 => {
                let (s, end) = self.string(i + 1)?;
                Ok((Value::Str(s), end))
            }
            0x7B => self.nested(i, true),
            0x5B => self.nested(i, false),
            _ if c == 'n' as u32 && self.lit(i, "null") => Ok((Value::Null, i + 4)),
            _ if c == 't' as u32 && self.lit(i, "true") => Ok((Value::Bool, i + 4)),
            _ if c == 'f' as u32 && self.lit(i, "false") => Ok((Value::Bool, i + 5)),
            _ if c == 'N' as u32 && self.lit(i, "NaN") => Ok((Value::Float, i + 3)),
            _ if c == 'I' as u32 && self.lit(i, "Infinity") => Ok((Value::Float, i + 8)),
            _ if c == '-' as u32 && self.lit(i, "-Infinity") => Ok((Value::Float, i + 9)),
            _ => self.number(i),
        }
    }

    fn nested(&mut self, i: usize, dict: bool) -> Result<(Value, usize), Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error {
                message: "maximum recursion depth exceeded while decoding a JSON document".into(),
                ..Default::default()
            });
        }
        let r = if dict {
            self.object(i + 1)
        } else {
            self.array(i + 1)
        };
        self.depth -= 1;
        r
    }

    fn is_digit(c: Option<u32>) -> bool {
        matches!(c, Some(0x30..=0x39))
    }

    fn number(&self, start: usize) -> Result<(Value, usize), Error> {
        let mut i = start;
        if self.at(i) == Some('-' as u32) {
            i += 1;
        }
        match self.at(i) {
            Some(0x31..=0x39) => {
                while Self::is_digit(self.at(i)) {
                    i += 1;
                }
            }
            Some(0x30) => i += 1,
            _ => return Err(self.err("Expecting value", start)),
        }
        let int_end = i;
        let mut float = false;
        if self.at(i) == Some('.' as u32) && Self::is_digit(self.at(i + 1)) {
            i += 2;
            while Self::is_digit(self.at(i)) {
                i += 1;
            }
            float = true;
        }
        if matches!(self.at(i), Some(0x65 | 0x45)) {
            let save = i;
            i += 1;
            if matches!(self.at(i), Some(0x2B | 0x2D)) {
                i += 1;
            }
            if Self::is_digit(self.at(i)) {
                while Self::is_digit(self.at(i)) {
                    i += 1;
                }
                float = true;
            } else {
                i = save;
            }
        }
        if float {
            return Ok((Value::Float, i));
        }
        let digits = int_end - start - usize::from(self.at(start) == Some('-' as u32));
        if digits > MAX_INT_DIGITS {
            return Err(Error {
                message: format!(
                    "Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion: value has {digits} digits"
                ),
                ..Default::default()
            });
        }
        Ok((Value::Int, i))
    }

    fn hex4(&self, i: usize) -> Option<u32> {
        let mut v = 0;
        for k in 0..4 {
            let c = char::from_u32(self.at(i + k)?)?;
            v = v * 16 + c.to_digit(16)?;
        }
        Some(v)
    }

    /// Scan a string whose opening quote is at `start - 1`.
    fn string(&self, start: usize) -> Result<(Text, usize), Error> {
        let begin = start - 1;
        let mut out = Vec::new();
        let mut i = start;
        loop {
            let Some(c) = self.at(i) else {
                return Err(self.err("Unterminated string starting at", begin));
            };
            match c {
                0x22 => return Ok((out, i + 1)),
                0x5C => {
                    let Some(e) = self.at(i + 1) else {
                        return Err(self.err("Unterminated string starting at", begin));
                    };
                    if e != 'u' as u32 {
                        let m = match char::from_u32(e) {
                            Some('"') => 0x22,
                            Some('\\') => 0x5C,
                            Some('/') => 0x2F,
                            Some('b') => 0x08,
                            Some('f') => 0x0C,
                            Some('n') => 0x0A,
                            Some('r') => 0x0D,
                            Some('t') => 0x09,
                            _ => return Err(self.err("Invalid \\escape", i)),
                        };
                        out.push(m);
                        i += 2;
                        continue;
                    }
                    let Some(mut cp) = self.hex4(i + 2) else {
                        return Err(self.err("Invalid \\uXXXX escape", i + 1));
                    };
                    i += 6;
                    if (0xD800..=0xDBFF).contains(&cp)
                        && self.at(i) == Some(0x5C)
                        && self.at(i + 1) == Some('u' as u32)
                        && i + 6 < self.s.len() + 1
                    {
                        match self.hex4(i + 2) {
                            Some(lo) if (0xDC00..=0xDFFF).contains(&lo) => {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                i += 6;
                            }
                            Some(_) => {}
                            None => return Err(self.err("Invalid \\uXXXX escape", i + 1)),
                        }
                    }
                    out.push(cp);
                }
                0x00..=0x1F => return Err(self.err("Invalid control character at", i)),
                _ => {
                    out.push(c);
                    i += 1;
                }
            }
        }
    }

    fn object(&mut self, start: usize) -> Result<(Value, usize), Error> {
        // Indexed: a duplicate key is found by hash, not by a scan of the
        // keys so far (100,000 keys took 23 s). `insert` keeps the first
        // position and takes the last value, as a Python dict.
        let mut pairs: IndexMap<Text, Value> = IndexMap::new();
        let mut i = self.ws(start);
        if self.at(i) == Some(0x7D) {
            return Ok((Value::Dict(Vec::new()), i + 1));
        }
        loop {
            if self.at(i) != Some(0x22) {
                return Err(self.err("Expecting property name enclosed in double quotes", i));
            }
            let (key, end) = self.string(i + 1)?;
            i = self.ws(end);
            if self.at(i) != Some(0x3A) {
                return Err(self.err("Expecting ':' delimiter", i));
            }
            i = self.ws(i + 1);
            let (v, end) = self.value(i)?;
            pairs.insert(key, v);
            i = self.ws(end);
            match self.at(i) {
                Some(0x7D) => return Ok((Value::Dict(pairs.into_iter().collect()), i + 1)),
                Some(0x2C) => i = self.ws(i + 1),
                _ => return Err(self.err("Expecting ',' delimiter", i)),
            }
        }
    }

    fn array(&mut self, start: usize) -> Result<(Value, usize), Error> {
        let mut i = self.ws(start);
        if self.at(i) == Some(0x5D) {
            return Ok((Value::List, i + 1));
        }
        loop {
            let (_, end) = self.value(i)?;
            i = self.ws(end);
            match self.at(i) {
                Some(0x5D) => return Ok((Value::List, i + 1)),
                Some(0x2C) => i = self.ws(i + 1),
                _ => return Err(self.err("Expecting ',' delimiter", i)),
            }
        }
    }
}

/// Why [`parse_env_output_until`] gave no pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputError {
    /// Not the protocol's JSON; Python's message (no input text).
    Json(String),
    /// The deadline passed while parsing.
    Timeout,
    /// More than [`MAX_OUTPUT_VALUES`] values: parsing stopped there.
    TooMany,
}

/// [`parse_env_output_until`] without a deadline (for the tests).
#[cfg(test)]
pub fn parse_env_output(stdout: &[u8]) -> Result<Vec<(Text, Value)>, String> {
    parse_env_output_until(stdout, None).map_err(|e| match e {
        OutputError::Json(m) => m,
        OutputError::Timeout => "timed out".into(),
        OutputError::TooMany => "too many values".into(),
    })
}

/// The reference's `_parse_env_json`: one object, or one object per
/// non-blank line merged in order; returns the merged pairs. Within
/// `deadline` (the layer's `--timeout`, which
/// parsing counts against). Linear in the output: duplicate keys within
/// one object and across the per-line objects are found by hash.
pub fn parse_env_output_until(
    stdout: &[u8],
    deadline: Option<Instant>,
) -> Result<Vec<(Text, Value)>, OutputError> {
    let fail = |e: Error| {
        if e.timeout {
            OutputError::Timeout
        } else if e.too_many {
            OutputError::TooMany
        } else {
            OutputError::Json(e.message)
        }
    };
    // One budget for the whole output (the per-line objects share it).
    let mut budget = MAX_OUTPUT_VALUES;
    let all = decode(stdout);
    let text = strip(&all);
    if text.is_empty() {
        return Ok(Vec::new());
    }
    match loads_within(text, deadline, &mut budget) {
        Ok(Value::Dict(pairs)) => return Ok(pairs),
        Ok(Value::Null) => {}
        Ok(_) => return Err(OutputError::Json("env.py must output a JSON object".into())),
        Err(e) if e.timeout || e.too_many || !e.decode => return Err(fail(e)),
        Err(_) => {}
    }
    budget = MAX_OUTPUT_VALUES;
    let mut merged: IndexMap<Text, Value> = IndexMap::new();
    for (n, line) in splitlines(text).into_iter().enumerate() {
        if n % 256 == 255 && deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(OutputError::Timeout);
        }
        let line = strip(line);
        if line.is_empty() {
            continue;
        }
        match loads_within(line, deadline, &mut budget).map_err(fail)? {
            Value::Dict(pairs) => {
                for (k, v) in pairs {
                    merged.insert(k, v);
                }
            }
            _ => {
                return Err(OutputError::Json(
                    "env.py must output a JSON object per line".into(),
                ))
            }
        }
    }
    Ok(merged.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Text {
        s.chars().map(|c| c as u32).collect()
    }

    fn keys(r: &[(Text, Value)]) -> Vec<String> {
        r.iter()
            .map(|(k, _)| String::from_utf8(encode(k)).unwrap())
            .collect()
    }

    /// Issue 22 #14: one output holds at most [`MAX_OUTPUT_VALUES`]
    /// values, in one object or across one object per line; parsing stops
    /// at the first value past it.
    #[test]
    fn an_output_over_the_value_budget_is_refused() {
        let n = MAX_OUTPUT_VALUES;
        let obj = |n: usize| {
            let body: Vec<String> = (0..n).map(|i| format!("\"K{i}\": \"\"")).collect();
            format!("{{{}}}", body.join(", "))
        };
        assert_eq!(parse_env_output(obj(n).as_bytes()).unwrap().len(), n);
        assert_eq!(
            parse_env_output(obj(n + 1).as_bytes()),
            Err("too many values".into())
        );
        let lines: String = (0..=n).map(|i| format!("{{\"K{i}\": \"\"}}\n")).collect();
        assert_eq!(
            parse_env_output(lines.as_bytes()),
            Err("too many values".into())
        );
        // Nested values count too.
        let nested = format!("{{\"A\": [{}]}}", vec!["1"; n].join(","));
        assert_eq!(
            parse_env_output(nested.as_bytes()),
            Err("too many values".into())
        );
    }

    #[test]
    fn python_extensions_parse() {
        for s in [
            "NaN",
            "-Infinity",
            "Infinity",
            "1e5",
            "-0.5",
            "[1, {\"a\": []}]",
        ] {
            assert!(loads(&t(s)).is_ok(), "{s}");
        }
        assert_eq!(loads(&t("1.5")).unwrap(), Value::Float);
        assert_eq!(loads(&t("15")).unwrap(), Value::Int);
        assert_eq!(
            loads(&t("1E")).unwrap_err().message,
            "Extra data: line 1 column 2 (char 1)"
        );
    }

    #[test]
    fn errors_like_python() {
        let m = |s: &str| loads(&t(s)).unwrap_err().message;
        assert_eq!(m(""), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(
            m("{\"A\": \"1\"} trailing"),
            "Extra data: line 1 column 12 (char 11)"
        );
        assert_eq!(
            m("{\"a\" 1}"),
            "Expecting ':' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(
            m("{'a': 1}"),
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
        assert_eq!(
            m("\"ab"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        assert_eq!(
            m("\"a\nb\""),
            "Invalid control character at: line 1 column 3 (char 2)"
        );
        assert_eq!(m("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(m("\"\\x\""), "Invalid \\escape: line 1 column 2 (char 1)");
    }

    #[test]
    fn strings_and_surrogates() {
        let Value::Str(s) = loads(&t("\"\\ud83d\\ude00\\ud800x\\u00e9\"")).unwrap() else {
            panic!()
        };
        assert_eq!(s, vec![0x1F600, 0xD800, 'x' as u32, 0xE9]);
        assert!(!is_utf8(&s));
        assert_eq!(decode(b"a\xffb"), vec![0x61, 0xDCFF, 0x62]);
    }

    #[test]
    fn env_output_protocol() {
        let r = parse_env_output(b"  {\"A\": \"1\", \"B\": 2, \"A\": \"3\"}\n").unwrap();
        assert_eq!(keys(&r), vec!["A", "B"]);
        assert_eq!(r[0].1, Value::Str(t("3")));
        let r = parse_env_output(b"{\"K\": null}\n\n{\"K\": \"v\", \"L\": \"x\"}\r\n").unwrap();
        assert_eq!(keys(&r), vec!["K", "L"]);
        assert_eq!(r[0].1, Value::Str(t("v")));
        assert!(parse_env_output(b"[1]")
            .unwrap_err()
            .contains("must output a JSON object"));
        assert!(parse_env_output(b"null").unwrap_err().contains("per line"));
        assert!(parse_env_output(b"{\"a\":\"1\"}\n[2]")
            .unwrap_err()
            .contains("per line"));
        assert!(parse_env_output(b"").unwrap().is_empty());
        assert!(parse_env_output(b"{\n \"A\": \"1\"\n}").is_ok());
    }

    #[test]
    fn many_keys_keep_first_position_last_value_and_honour_the_deadline() {
        let n = 20_000;
        let mut one = String::from("{");
        let mut lines = String::new();
        for i in 0..n {
            one.push_str(&format!("\"K{i}\": \"{i}\", "));
            lines.push_str(&format!("{{\"K{i}\": \"{i}\"}}\n"));
        }
        one.push_str("\"K0\": \"last\"}");
        lines.push_str("{\"K0\": \"last\"}\n");
        for text in [&one, &lines] {
            let r = parse_env_output(text.as_bytes()).unwrap();
            assert_eq!(r.len(), n);
            assert_eq!(keys(&r[..2]), ["K0", "K1"]);
            assert_eq!(r[0].1, Value::Str(t("last")));
            // A deadline that has passed: parsing stops (at the first look
            // at the clock), in both forms.
            let past = Some(Instant::now());
            assert_eq!(
                parse_env_output_until(text.as_bytes(), past),
                Err(OutputError::Timeout)
            );
            let later = Some(Instant::now() + std::time::Duration::from_secs(3600));
            assert_eq!(parse_env_output_until(text.as_bytes(), later).unwrap(), r);
        }
    }
}
