//! `--manifest-env FILE`: a JSON object of name → string, the defaults the
//! host merged into the environment (the server's declared `env` block).
//!
//! serde_json's own errors quote the offending input, which may be a
//! secret, so they are never shown: a syntax error is reported by line and
//! column, a wrong type by key and JSON type.

use indexmap::IndexMap;
use std::fmt;

/// Why a manifest file was refused. Never holds a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestError {
    /// Not valid JSON (or truncated); position of the error.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The text ended too early.
        eof: bool,
    },
    /// Valid JSON, but the top level is not an object.
    NotObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// The value of `key` is not a string.
    NotString {
        /// The key (a name, not a value).
        key: String,
        /// The JSON type found instead.
        found: &'static str,
    },
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::Syntax { line, column, eof } => {
                if *eof {
                    write!(f, "unexpected end of JSON at line {line}, column {column}")
                } else {
                    write!(f, "invalid JSON at line {line}, column {column}")
                }
            }
            ManifestError::NotObject { found } => {
                write!(f, "expected a JSON object of name to string, found {found}")
            }
            ManifestError::NotString { key, found } => {
                // The key is a name; JSON-quote it so control characters
                // cannot forge log lines.
                let k = serde_json::to_string(key).unwrap_or_default();
                write!(f, "the value of key {k} is {found}, not a string")
            }
        }
    }
}

impl std::error::Error for ManifestError {}

fn type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Parse manifest defaults. Keys keep the file's order; a key repeated in
/// the file keeps its first position and its last value.
/// A leading UTF-8 byte order mark is ignored.
pub fn parse_manifest_env(bytes: &[u8]) -> Result<IndexMap<String, String>, ManifestError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| ManifestError::Syntax {
            line: e.line(),
            column: e.column(),
            eof: e.is_eof(),
        })?;
    let obj = match v {
        serde_json::Value::Object(o) => o,
        other => {
            return Err(ManifestError::NotObject {
                found: type_name(&other),
            })
        }
    };
    let mut out = IndexMap::with_capacity(obj.len());
    for (k, v) in obj {
        match v {
            serde_json::Value::String(s) => {
                out.insert(k, s);
            }
            other => {
                return Err(ManifestError::NotString {
                    key: k,
                    found: type_name(&other),
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_of_strings() {
        let m = parse_manifest_env(br#"{"B":"2","A":"1","B":"3"}"#).unwrap();
        assert_eq!(m.keys().collect::<Vec<_>>(), vec!["B", "A"]);
        assert_eq!(m["B"], "3");
        assert!(parse_manifest_env(b"{}").unwrap().is_empty());
        let bom = parse_manifest_env(b"\xef\xbb\xbf{\"A\":\"1\"}").unwrap();
        assert_eq!(bom["A"], "1");
    }

    #[test]
    fn non_string_names_key_not_value() {
        let e = parse_manifest_env(br#"{"OK":"x","PORT":8080}"#).unwrap_err();
        assert_eq!(
            e,
            ManifestError::NotString {
                key: "PORT".into(),
                found: "a number"
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("\"PORT\""), "{msg}");
        assert!(!msg.contains("8080"), "{msg}");
        let e = parse_manifest_env(br#"{"T":{"secret":"hunter2"}}"#).unwrap_err();
        assert!(!e.to_string().contains("hunter2"));
        assert!(e.to_string().contains("an object"));
    }

    #[test]
    fn syntax_error_has_position_only() {
        let e = parse_manifest_env(b"{\n  \"K\": hunter2secret\n}").unwrap_err();
        match &e {
            ManifestError::Syntax { line, .. } => assert_eq!(*line, 2),
            other => panic!("{other:?}"),
        }
        assert!(!e.to_string().contains("hunter2"), "{e}");
        let e = parse_manifest_env(b"{\"K\": \"unterminated-secret").unwrap_err();
        assert!(matches!(e, ManifestError::Syntax { eof: true, .. }));
        assert!(!e.to_string().contains("secret"));
    }

    #[test]
    fn top_level_must_be_object() {
        let e = parse_manifest_env(br#"["a"]"#).unwrap_err();
        assert_eq!(e, ManifestError::NotObject { found: "an array" });
        let e = parse_manifest_env(br#""hunter2""#).unwrap_err();
        assert!(!e.to_string().contains("hunter2"));
    }
}
