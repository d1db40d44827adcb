//! A small YAML node tree built from serde-saphyr's parser (granit-parser)
//! events: every scalar keeps its literal text (YAML 1.2 `yes`, `1.0`,
//! `0x1F` stay as written) and every node its position. Only the first
//! document is read. Duplicate keys are errors; aliases are replayed with a
//! node budget; `<<` merge keys are applied (explicit keys win).
//!
//! Error messages name the position and never quote a value.

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, ScanError};
use std::collections::HashMap;

/// 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub line: usize,
    pub col: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `~`, `null`, `Null`, `NULL`, empty, or `!!null`.
    Null,
    /// Any other scalar: its text (after quote/escape processing).
    Scalar {
        text: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: Kind,
    pub pos: Pos,
    size: usize,
}

impl Node {
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Null => "null",
            Kind::Scalar { .. } => "a scalar",
            Kind::Seq(_) => "a sequence",
            Kind::Map(_) => "a mapping",
        }
    }

    /// The text of a scalar used as a mapping key (null → "").
    pub fn key_text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Null => Some(""),
            Kind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// Largest number of nodes a document may expand to (aliases included).
const NODE_BUDGET: usize = 1_000_000;

/// A syntax or structure error: position plus a message without values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub pos: Pos,
    pub message: String,
}

fn scan_error(e: &ScanError) -> YamlError {
    use serde_saphyr::granit_parser::ErrorKind;
    let m = e.marker();
    let message = match e.kind() {
        // These two can carry source text; describe them instead.
        ErrorKind::UnexpectedCharacter { .. } => "unexpected reserved character".to_string(),
        ErrorKind::Custom(_) => "syntax error".to_string(),
        k => {
            let s = k.to_string();
            if s.is_empty() {
                "syntax error".to_string()
            } else {
                s
            }
        }
    };
    YamlError {
        pos: Pos {
            line: m.line(),
            col: m.col() + 1,
        },
        message,
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        pos: Pos,
        anchor: usize,
        size: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        pos: Pos,
        anchor: usize,
        size: usize,
    },
}

fn is_null_scalar(text: &str, style: ScalarStyle) -> bool {
    style == ScalarStyle::Plain && matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

/// Apply `<<` merge keys and check duplicate keys of a finished mapping.
fn finish_map(entries: Vec<(Node, Node)>) -> Result<Vec<(Node, Node)>, YamlError> {
    let mut explicit: Vec<(Node, Node)> = Vec::with_capacity(entries.len());
    let mut merged: Vec<(Node, Node)> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (k, v) in entries {
        let is_merge = matches!(&k.kind, Kind::Scalar { text, plain: true } if text == "<<");
        if is_merge {
            let sources: Vec<Node> = match v.kind {
                Kind::Map(_) => vec![v],
                Kind::Seq(items) => items,
                _ => {
                    return Err(YamlError {
                        pos: v.pos,
                        message: "merge key value must be a mapping or a sequence of mappings"
                            .into(),
                    })
                }
            };
            for src in sources {
                match src.kind {
                    Kind::Map(es) => merged.extend(es),
                    _ => {
                        return Err(YamlError {
                            pos: src.pos,
                            message: "merge key value must be a mapping or a sequence of mappings"
                                .into(),
                        })
                    }
                }
            }
            continue;
        }
        let Some(text) = k.key_text() else {
            return Err(YamlError {
                pos: k.pos,
                message: "mapping keys must be scalars".into(),
            });
        };
        if let Some(line) = seen.get(text) {
            return Err(YamlError {
                pos: k.pos,
                // The key is not quoted: it can be a token (`{ghp_…: 1, ghp_…: 2}`).
                message: format!("mapping key already defined at line {line}"),
            });
        }
        seen.insert(text.to_string(), k.pos.line);
        explicit.push((k, v));
    }
    // Merged keys fill only what is not set explicitly; earlier sources win.
    for (k, v) in merged {
        let text = k.key_text().unwrap_or("").to_string();
        if let std::collections::hash_map::Entry::Vacant(e) = seen.entry(text) {
            e.insert(k.pos.line);
            explicit.push((k, v));
        }
    }
    Ok(explicit)
}

/// Parse the first document of `text`. An empty stream gives `None`.
pub fn parse_first_document(text: &str) -> Result<Option<Node>, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut total: usize = 0;
    let mut root: Option<Node> = None;
    let mut in_doc = false;

    for ev in parser.by_ref() {
        let (ev, span) = ev.map_err(|e| scan_error(&e))?;
        let pos = Pos {
            line: span.start.line(),
            col: span.start.col() + 1,
        };
        let done: Option<(Node, usize)> = match ev {
            Event::StreamStart | Event::Anchor(..) => None,
            Event::DocumentStart(..) => {
                in_doc = true;
                None
            }
            Event::DocumentEnd | Event::StreamEnd => break,
            Event::Alias(id) => match anchors.get(&id) {
                Some(n) => {
                    total += n.size;
                    Some((n.clone(), 0))
                }
                None => {
                    return Err(YamlError {
                        pos,
                        message: "unknown anchor".into(),
                    })
                }
            },
            Event::UnresolvedAlias(_) => {
                return Err(YamlError {
                    pos,
                    message: "unknown anchor".into(),
                })
            }
            Event::Scalar(value, style, anchor, tag) => {
                total += 1;
                let null = match &tag {
                    Some(t) if t.is_yaml_core_schema() => {
                        t.suffix() == "null"
                            || (t.suffix() != "str" && is_null_scalar(&value, style))
                    }
                    Some(_) => false,
                    None => is_null_scalar(&value, style),
                };
                let kind = if null {
                    Kind::Null
                } else {
                    Kind::Scalar {
                        text: value.into_owned(),
                        // Plain and untagged (or `!!bool`): eligible for
                        // the core booleans when a bool is expected.
                        plain: style == ScalarStyle::Plain
                            && tag
                                .as_ref()
                                .is_none_or(|t| t.is_yaml_core_schema() && t.suffix() == "bool"),
                    }
                };
                Some((Node { kind, pos, size: 1 }, anchor))
            }
            Event::SequenceStart(_, anchor, _) => {
                stack.push(Frame::Seq {
                    items: Vec::new(),
                    pos,
                    anchor,
                    size: 1,
                });
                total += 1;
                None
            }
            Event::MappingStart(_, anchor, _) => {
                stack.push(Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    pos,
                    anchor,
                    size: 1,
                });
                total += 1;
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq {
                    items,
                    pos,
                    anchor,
                    size,
                }) => Some((
                    Node {
                        kind: Kind::Seq(items),
                        pos,
                        size,
                    },
                    anchor,
                )),
                _ => None,
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    entries,
                    pos,
                    anchor,
                    size,
                    ..
                }) => Some((
                    Node {
                        kind: Kind::Map(finish_map(entries)?),
                        pos,
                        size,
                    },
                    anchor,
                )),
                _ => None,
            },
            #[allow(unreachable_patterns)]
            _ => None,
        };
        if total > NODE_BUDGET {
            return Err(YamlError {
                pos,
                message: format!("document expands to more than {NODE_BUDGET} nodes"),
            });
        }
        let Some((node, anchor)) = done else { continue };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => {
                root = Some(node);
            }
            Some(Frame::Seq { items, size, .. }) => {
                *size += node.size;
                items.push(node);
            }
            Some(Frame::Map {
                entries, key, size, ..
            }) => {
                *size += node.size;
                match key.take() {
                    None => *key = Some(node),
                    Some(k) => entries.push((k, node)),
                }
            }
        }
    }
    let _ = in_doc;
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(n: &Node) -> Vec<(String, Node)> {
        match &n.kind {
            Kind::Map(es) => es
                .iter()
                .map(|(k, v)| (k.key_text().unwrap().to_string(), v.clone()))
                .collect(),
            _ => panic!("not a map"),
        }
    }

    fn text(n: &Node) -> Option<&str> {
        match &n.kind {
            Kind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    #[test]
    fn scalars_keep_literal_text() {
        let n = parse_first_document(
            "a: 5\nb: true\nc: 1.50\nd: 0x1F\ne: yes\nf: 1e3\ng: 'q'\nh: \"x\\ty\"\n",
        )
        .unwrap()
        .unwrap();
        let m = map(&n);
        let t: Vec<_> = m
            .iter()
            .map(|(_, v)| text(v).unwrap().to_string())
            .collect();
        assert_eq!(t, ["5", "true", "1.50", "0x1F", "yes", "1e3", "q", "x\ty"]);
    }

    #[test]
    fn nulls() {
        let n =
            parse_first_document("a: ~\nb: null\nc:\nd: NULL\ne: ''\nf: !!null x\ng: !!str ~\n")
                .unwrap()
                .unwrap();
        let m = map(&n);
        assert!(matches!(m[0].1.kind, Kind::Null));
        assert!(matches!(m[1].1.kind, Kind::Null));
        assert!(matches!(m[2].1.kind, Kind::Null));
        assert!(matches!(m[3].1.kind, Kind::Null));
        assert_eq!(text(&m[4].1), Some(""));
        assert!(matches!(m[5].1.kind, Kind::Null));
        assert_eq!(text(&m[6].1), Some("~"));
    }

    #[test]
    fn duplicate_key_is_an_error_with_lines() {
        let e = parse_first_document("a: 1\nb:\n  x: 1\n  x: secret\n").unwrap_err();
        assert_eq!(e.pos.line, 4);
        assert!(
            e.message.contains("already defined at line 3"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("secret"));
        let e = parse_first_document("{ghp_secret1: 1, ghp_secret1: 2}\n").unwrap_err();
        assert_eq!(e.message, "mapping key already defined at line 1");
    }

    #[test]
    fn only_first_document() {
        let n = parse_first_document("a: 1\n---\nb: [\n").unwrap().unwrap();
        assert_eq!(map(&n).len(), 1);
        assert_eq!(parse_first_document("").unwrap(), None);
        assert_eq!(parse_first_document("# just a comment\n").unwrap(), None);
    }

    #[test]
    fn aliases_and_merge_keys() {
        let n = parse_first_document("base: &b {x: 1, y: 2}\nuse: *b\nm:\n  <<: *b\n  y: 3\n")
            .unwrap()
            .unwrap();
        let m = map(&n);
        assert_eq!(m[1].1, m[0].1);
        let mm = map(&m[2].1);
        let keys: Vec<_> = mm.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["y", "x"]);
        assert_eq!(text(&mm[0].1), Some("3"));
    }

    #[test]
    fn billion_laughs_is_bounded() {
        let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            s.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = parse_first_document(&s).unwrap_err();
        assert!(e.message.contains("more than"));
    }

    #[test]
    fn syntax_errors_have_positions_and_no_text() {
        let e = parse_first_document("a: b\n c: [secret-value\n").unwrap_err();
        assert!(e.pos.line >= 1);
        assert!(!e.message.contains("secret"));
        let e = parse_first_document("k: @secret\n").unwrap_err();
        assert!(!e.message.contains("secret"), "{}", e.message);
    }

    #[test]
    fn positions() {
        let n = parse_first_document("a:\n  b: [1, 2]\n").unwrap().unwrap();
        let m = map(&n);
        let inner = map(&m[0].1);
        assert_eq!(inner[0].1.pos, Pos { line: 2, col: 6 });
    }
}
