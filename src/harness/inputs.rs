//! The side inputs of a harness resolution: `--env-file` (the project's
//! dotenv grammar, strict), `--event` (JSON) and `--config` (JSON or YAML).
//! Messages name files, lines and columns, never values.

use super::yaml::{self, Kind, Node};
use super::Error;
use crate::core::Env;
use std::ffi::OsString;
use std::path::Path;

/// Largest env file accepted (the reference's limit).
pub const MAX_ENV_FILE: u64 = 1_048_576;

/// Largest `--event` / `--config` / harness YAML file read.
pub const MAX_INPUT_FILE: u64 = 16 << 20;

fn read(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    crate::fsutil::read_input(path, MAX_INPUT_FILE).map_err(|e| {
        Error::new(format!(
            "{what} {}: {}",
            path.display(),
            crate::process::io_kind(&e)
        ))
    })
}

/// Load `path` into `env` (later files and lines win). Strict: a line the
/// grammar ignores is an error naming the file and line.
pub fn load_env_file(path: &Path, env: &mut Env) -> Result<(), Error> {
    let wrap = |m: String| Error::new(format!("loading env file {}: {m}", path.display()));
    let md = std::fs::metadata(path)
        .map_err(|e| wrap(format!("opening env file: {}", crate::process::io_kind(&e))))?;
    if md.len() > MAX_ENV_FILE {
        return Err(Error::new(format!(
            "env file {} exceeds maximum size ({MAX_ENV_FILE} bytes)",
            path.display()
        )));
    }
    let bytes = crate::fsutil::read_input(path, MAX_ENV_FILE)
        .map_err(|e| wrap(format!("opening env file: {}", crate::process::io_kind(&e))))?;
    let parsed = crate::dotenv::parse_bytes(&bytes);
    if let Some(d) = parsed.diagnostics.iter().find(|d| d.is_error) {
        return Err(Error::new(format!(
            "{}:{}: loading env file: {}",
            path.display(),
            d.line,
            d.message
        )));
    }
    for e in parsed.entries {
        env.insert(OsString::from(e.key), OsString::from(e.value));
    }
    Ok(())
}

fn json_error(path: &Path, what: &str, e: &serde_json::Error) -> Error {
    let kind = match e.classify() {
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "unexpected data",
        serde_json::error::Category::Eof => "unexpected end of input",
    };
    Error::new(format!(
        "{}:{}:{}: parsing {what} JSON: {kind}",
        path.display(),
        e.line(),
        e.column()
    ))
}

/// `--event FILE`: a JSON object.
pub fn load_event(path: &Path) -> Result<serde_json::Value, Error> {
    let bytes = read(path, "reading event file")?;
    let v: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| json_error(path, "event", &e))?;
    if !v.is_object() {
        return Err(Error::new(format!(
            "{}: event must be a JSON object",
            path.display()
        )));
    }
    Ok(v)
}

/// YAML 1.2 core-schema typing of a plain scalar (for `--config` YAML).
fn typed_scalar(text: &str, plain: bool) -> serde_json::Value {
    use serde_json::Value as J;
    if !plain {
        return J::String(text.to_string());
    }
    match text {
        "true" | "True" | "TRUE" => return J::Bool(true),
        "false" | "False" | "FALSE" => return J::Bool(false),
        _ => {}
    }
    let num = |f: f64| {
        serde_json::Number::from_f64(f)
            .map(J::Number)
            .unwrap_or_else(|| J::String(text.to_string()))
    };
    let t = text.strip_prefix('+').unwrap_or(text);
    if let Some(h) = t.strip_prefix("0x") {
        if let Ok(i) = i64::from_str_radix(h, 16) {
            return num(i as f64);
        }
    }
    if let Some(o) = t.strip_prefix("0o") {
        if let Ok(i) = i64::from_str_radix(o, 8) {
            return num(i as f64);
        }
    }
    let numeric = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        && text.bytes().any(|b| b.is_ascii_digit());
    if numeric {
        if let Ok(f) = text.parse::<f64>() {
            return num(f);
        }
    }
    J::String(text.to_string())
}

fn node_to_json(n: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &n.kind {
        Kind::Null => J::Null,
        Kind::Scalar { text, plain } => typed_scalar(text, *plain),
        Kind::Seq(items) => J::Array(items.iter().map(node_to_json).collect()),
        Kind::Map(es) => J::Object(
            es.iter()
                .map(|(k, v)| (k.key_text().unwrap_or("").to_string(), node_to_json(v)))
                .collect(),
        ),
    }
}

/// `--config FILE`: JSON (`.json`) or YAML (anything else); a mapping.
/// Numbers become doubles, as after the reference's JSON round-trip.
pub fn load_config(path: &Path) -> Result<serde_json::Value, Error> {
    let bytes = read(path, "reading config file")?;
    let is_json = path.extension().is_some_and(|e| e == "json");
    let v = if is_json {
        serde_json::from_slice(&bytes).map_err(|e| json_error(path, "config", &e))?
    } else {
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::new(format!("{}: config is not valid UTF-8", path.display())))?;
        let root = yaml::parse_first_document(&text).map_err(|e| {
            Error::new(format!(
                "{}:{}:{}: parsing config YAML: {}",
                path.display(),
                e.pos.line,
                e.pos.col,
                e.message
            ))
        })?;
        root.as_ref()
            .map(node_to_json)
            .unwrap_or(serde_json::Value::Null)
    };
    match v {
        serde_json::Value::Null => Ok(serde_json::Value::Object(Default::default())),
        serde_json::Value::Object(_) => Ok(v),
        _ => Err(Error::new(format!(
            "{}: config must be a mapping",
            path.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tmp(name: &str, body: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join(name);
        std::fs::write(&p, body).unwrap();
        (d, p)
    }

    #[test]
    fn config_yaml_and_json() {
        let (_d, p) = tmp(
            "c.yaml",
            "forge: github\nroles: [a, b]\nkill_switch: true\nversion: '1'\nn: 2\n",
        );
        assert_eq!(
            load_config(&p).unwrap(),
            json!({"forge": "github", "roles": ["a", "b"], "kill_switch": true, "version": "1", "n": 2.0})
        );
        let (_d, p) = tmp("c.json", "{\"forge\": \"gitlab\"}");
        assert_eq!(load_config(&p).unwrap(), json!({"forge": "gitlab"}));
        let (_d, p) = tmp("c.json", "{\"forge\": \"secret-a");
        let e = load_config(&p).unwrap_err().to_string();
        assert!(e.contains("parsing config JSON"), "{e}");
        assert!(!e.contains("secret"));
        let (_d, p) = tmp("c.yaml", "- secret-b\n");
        let e = load_config(&p).unwrap_err().to_string();
        assert!(e.contains("config must be a mapping"), "{e}");
        let (_d, p) = tmp("c.yaml", "");
        assert_eq!(load_config(&p).unwrap(), json!({}));
    }

    #[test]
    fn event_json() {
        let (_d, p) = tmp("e.json", "{\"a\": 1}");
        assert_eq!(load_event(&p).unwrap(), json!({"a": 1}));
        let (_d, p) = tmp("e.json", "[\"secret-c\"]");
        let e = load_event(&p).unwrap_err().to_string();
        assert!(e.contains("event must be a JSON object"));
        assert!(!e.contains("secret"));
        let (_d, p) = tmp("e.json", "{\"a\": \"secret-d\" x}");
        let e = load_event(&p).unwrap_err().to_string();
        assert!(e.contains(":1:"), "{e}");
        assert!(!e.contains("secret"));
    }

    #[test]
    fn typed_scalars() {
        assert_eq!(typed_scalar("0x1F", true), json!(31.0));
        assert_eq!(typed_scalar("1.5", true), json!(1.5));
        assert_eq!(typed_scalar("1.5", false), json!("1.5"));
        assert_eq!(typed_scalar("yes", true), json!("yes"));
        assert_eq!(typed_scalar("-", true), json!("-"));
        assert_eq!(typed_scalar("e", true), json!("e"));
    }
}
