//! The side inputs of a harness resolution: `--env-file` (fullsend's
//! `envfile` grammar), `--event` (JSON) and `--config` (JSON or YAML, and
//! the `config` map CEL guards see).
//! Messages name files, lines and columns, never values.

use super::yaml::{self, Kind, Node};
use super::Error;
use crate::core::ChangeSet;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;

/// Largest env file accepted (the reference's limit).
pub const MAX_ENV_FILE: u64 = 1_048_576;

/// Largest `--event` / `--config` / harness YAML file read.
pub const MAX_INPUT_FILE: u64 = 16 << 20;

fn read(path: &Path, what: &str) -> Result<Vec<u8>, Error> {
    crate::fsutil::read_input(path, MAX_INPUT_FILE).map_err(|e| {
        Error::input(format!(
            "{what} {}: {}",
            path.display(),
            crate::fsutil::io_kind(&e)
        ))
    })
}

use crate::compat::go::trim_space;

/// The value of one line (after the key and `=`), as `envfile.Load` reads
/// it: a quoted value is the text between the first two quotes (anything
/// after is dropped); an unquoted value ends at the first ` #`, trailing
/// spaces trimmed. No escapes, no expansion.
fn env_value(v: &[u8]) -> &[u8] {
    if v.len() >= 2 && (v[0] == b'"' || v[0] == b'\'') {
        if let Some(end) = v[1..].iter().position(|&c| c == v[0]) {
            return &v[1..1 + end];
        }
    }
    let cut = v.windows(2).position(|w| w == b" #").unwrap_or(v.len());
    let mut v = &v[..cut];
    while let [rest @ .., b' '] = v {
        v = rest;
    }
    v
}

/// Read `path` with fullsend's own `envfile.Load` grammar into a change set
/// (keys with their lines; the grammar fullsend's `--env-file` uses exactly,
/// not the operator layer's): later lines win (and later files, as layers of
/// the run's assembly); blank lines and comments are skipped, and so is a line
/// without `=`, with a warning in `notes` naming the file and line. An invalid
/// name is an error naming the file and line and only the name's valid prefix.
/// Values are bytes.
pub fn load_env_file(path: &Path, notes: &mut Vec<String>) -> Result<ChangeSet, Error> {
    let mut cs = ChangeSet::new();
    let wrap = |m: String| Error::input(format!("loading env file {}: {m}", path.display()));
    let md = std::fs::metadata(path)
        .map_err(|e| wrap(format!("opening env file: {}", crate::fsutil::io_kind(&e))))?;
    if md.len() > MAX_ENV_FILE {
        return Err(Error::input(format!(
            "env file {} exceeds maximum size ({MAX_ENV_FILE} bytes)",
            path.display()
        )));
    }
    let bytes = crate::fsutil::read_input(path, MAX_ENV_FILE)
        .map_err(|e| wrap(format!("opening env file: {}", crate::fsutil::io_kind(&e))))?;
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        let mut line = raw;
        while let [rest @ .., b'\r'] = line {
            line = rest;
        }
        let line = trim_space(line);
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            notes.push(format!(
                "{}:{n}: line skipped (no \"=\"; an env file line is KEY=value)",
                path.display()
            ));
            continue;
        };
        let line = line.strip_prefix(b"export ").unwrap_or(line);
        let eq = line.iter().position(|&b| b == b'=').unwrap_or(eq);
        let key = String::from_utf8_lossy(&line[..eq]);
        if !crate::compat::ident::is_name(key.as_bytes()) {
            return Err(Error::input(format!(
                "{}:{n}: invalid env var name {:?}",
                path.display(),
                super::shown_key(&key),
            )));
        }
        let value = env_value(&line[eq + 1..]);
        if value.contains(&0) {
            return Err(wrap(format!("line {n}: setting {key}: invalid argument")));
        }
        cs.set_at(
            OsString::from(key.into_owned()),
            OsString::from_vec(value.to_vec()),
            n as u32,
        );
    }
    Ok(cs)
}

fn json_error(path: &Path, what: &str, e: &serde_json::Error) -> Error {
    let kind = match e.classify() {
        serde_json::error::Category::Io => "read error",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "unexpected data",
        serde_json::error::Category::Eof => "unexpected end of input",
    };
    Error::input(format!(
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
        return Err(Error::input(format!(
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
            .map_err(|_| Error::input(format!("{}: config is not valid UTF-8", path.display())))?;
        let root = yaml::parse_first_document(&text).map_err(|e| {
            Error::input(format!(
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
        _ => Err(Error::input(format!(
            "{}: config must be a mapping",
            path.display()
        ))),
    }
}

/// fullsend's `BuildConfigMap` (as on main, 2026-10-01): the `config` variable
/// of CEL guards, from the per-repo config. Keys only when non-empty;
/// `kill_switch` only when active; each `agents[]` item with `source`, `name`,
/// `enabled`, `runtime`, `model`, `effort` when set. `mint_url` and
/// `inference` are never exposed, nor anything else.
pub fn config_map(raw: &serde_json::Value) -> serde_json::Value {
    use serde_json::{Map, Value as J};
    let text = |v: Option<&J>| -> Option<String> {
        match v? {
            J::String(s) if !s.is_empty() => Some(s.clone()),
            J::Number(n) => Some(match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
                _ => n.to_string(),
            }),
            J::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    };
    let strings = |v: Option<&J>| -> Option<J> {
        let items: Vec<J> = v?
            .as_array()?
            .iter()
            .filter_map(|x| text(Some(x)))
            .map(J::String)
            .collect();
        (!items.is_empty()).then_some(J::Array(items))
    };
    let mut m = Map::new();
    for k in ["forge", "tracker", "runtime"] {
        if let Some(v) = text(raw.get(k)) {
            m.insert(k.into(), J::String(v));
        }
    }
    if let Some(v) = strings(raw.get("roles")) {
        m.insert("roles".into(), v);
    }
    if let Some(v) = text(raw.get("version")) {
        m.insert("version".into(), J::String(v));
    }
    if raw.get("kill_switch") == Some(&J::Bool(true)) {
        m.insert("kill_switch".into(), J::Bool(true));
    }
    if let Some(agents) = raw.get("agents").and_then(|a| a.as_array()) {
        let items: Vec<J> = agents
            .iter()
            .map(|a| {
                let mut o = Map::new();
                for k in ["source", "name"] {
                    if let Some(v) = text(a.get(k)) {
                        o.insert(k.into(), J::String(v));
                    }
                }
                if let Some(J::Bool(b)) = a.get("enabled") {
                    o.insert("enabled".into(), J::Bool(*b));
                }
                for k in ["runtime", "model", "effort"] {
                    if let Some(v) = text(a.get(k)) {
                        o.insert(k.into(), J::String(v));
                    }
                }
                J::Object(o)
            })
            .collect();
        if !items.is_empty() {
            m.insert("agents".into(), J::Array(items));
        }
    }
    if let Some(v) = strings(raw.get("allowed_remote_resources")) {
        m.insert("allowed_remote_resources".into(), v);
    }
    if let Some(t) = raw
        .get("create_issues")
        .and_then(|c| c.get("allow_targets"))
    {
        let mut o = Map::new();
        if let Some(v) = strings(t.get("orgs")) {
            o.insert("allow_orgs".into(), v);
        }
        if let Some(v) = strings(t.get("repos")) {
            o.insert("allow_repos".into(), v);
        }
        if !o.is_empty() {
            m.insert("create_issues".into(), J::Object(o));
        }
    }
    if let Some(c) = raw
        .get("status_notifications")
        .and_then(|s| s.get("comment"))
    {
        let mut o = Map::new();
        for k in ["start", "completion"] {
            if let Some(v) = text(c.get(k)) {
                o.insert(k.into(), J::String(v));
            }
        }
        if !o.is_empty() {
            m.insert("status_notifications".into(), J::Object(o));
        }
    }
    J::Object(m)
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
    fn config_map_exposes_only_the_documented_keys() {
        let raw = json!({
            "forge": "github", "tracker": "", "version": 1.0, "roles": ["a", ""],
            "kill_switch": false, "mint_url": "https://secret", "inference": {"project": "p"},
            "agents": [{"source": "", "name": "n", "enabled": false, "runtime": "claude", "model": "m", "effort": "", "x": 1}],
            "allowed_remote_resources": [],
            "create_issues": {"allow_targets": {"orgs": ["o"], "repos": []}},
            "status_notifications": {"comment": {"start": "s"}},
            "other": true
        });
        assert_eq!(
            config_map(&raw),
            json!({
                "forge": "github", "version": "1", "roles": ["a"],
                "agents": [{"name": "n", "enabled": false, "runtime": "claude", "model": "m"}],
                "create_issues": {"allow_orgs": ["o"]},
                "status_notifications": {"start": "s"}
            })
        );
        assert_eq!(
            config_map(&json!({"kill_switch": true}))["kill_switch"],
            json!(true)
        );
        assert_eq!(config_map(&json!({})), json!({}));
    }

    fn load(body: &[u8]) -> (Result<(), Error>, crate::core::Env, Vec<String>) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("e.env");
        std::fs::write(&p, body).unwrap();
        let mut notes = Vec::new();
        let mut env = crate::core::Env::new();
        let r = load_env_file(&p, &mut notes).map(|cs| cs.apply_to(&mut env));
        (r, env, notes)
    }

    #[test]
    fn env_file_grammar_is_envfile_load() {
        let (r, env, notes) = load(
            b"# c\n\nA= v\nexport B=\"a\"b\nC='it''s'\nD=v # c\nE=v#tag\nF=\"value'\nG=\"\nexportH=x\nno equals here\r\nI=a\xffb\n  J=trim  \n",
        );
        r.unwrap();
        let get = |k: &str| {
            env.get(std::ffi::OsStr::new(k))
                .map(|v| v.as_encoded_bytes().to_vec())
        };
        assert_eq!(get("A").unwrap(), b" v");
        assert_eq!(get("B").unwrap(), b"a");
        assert_eq!(get("C").unwrap(), b"it");
        assert_eq!(get("D").unwrap(), b"v");
        assert_eq!(get("E").unwrap(), b"v#tag");
        assert_eq!(get("F").unwrap(), b"\"value'");
        assert_eq!(get("G").unwrap(), b"\"");
        assert_eq!(get("exportH").unwrap(), b"x");
        assert_eq!(get("I").unwrap(), b"a\xffb");
        assert_eq!(get("J").unwrap(), b"trim");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].ends_with(":11: line skipped (no \"=\"; an env file line is KEY=value)"),
            "{notes:?}"
        );
        for (body, shown) in [
            (&b"K =v\n"[..], "\"K…\""),
            (b"export  K=v\n", "\"…\""),
            (b"GH_TOKEN ghp_secret=v\n", "\"GH_TOKEN…\""),
        ] {
            let e = load(body).0.unwrap_err().to_string();
            assert!(e.contains(&format!("invalid env var name {shown}")), "{e}");
            assert!(e.contains(":1: "), "{e}");
            assert!(!e.contains("secret"), "{e}");
        }
        let e = load(b"A=1\nB=x\0secret\n").0.unwrap_err().to_string();
        assert!(e.ends_with("line 2: setting B: invalid argument"), "{e}");
        assert!(!e.contains("secret"), "{e}");
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
