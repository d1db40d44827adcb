//! The rewrite of `agentenv mcp migrate`: in one server, the `env` keys
//! whose literals went into a store are removed, and the server starts as
//! `agentenv exec --only NAME,… --redact -- CMD ARGS…`. Every byte outside
//! the server's `command`, `args` and `env` stays as it was: JSON through
//! the span editor ([`crate::jsonedit`]), TOML through `toml_edit`.

use super::{Client, Place};
use crate::jsonedit::{self, Node};

/// The program a migrated server starts.
pub const PROGRAM: &str = "agentenv";

/// One server to rewrite: its path in the file and the `env` keys moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The keys from the root to the server's object ([`super::Server::path`]).
    pub path: Vec<String>,
    /// The `env` keys whose literals went into the store.
    pub names: Vec<String>,
}

/// `agentenv exec --only NAMES --redact -- CMD ARGS…` as command and
/// arguments. A server that already starts as `agentenv exec …` gets the
/// names added to its `--only` (or a new `--only` after `exec`).
pub fn wrap(command: &str, args: &[String], names: &[String]) -> (String, Vec<String>) {
    if is_wrapped(command, args) {
        let mut out = args.to_vec();
        let dash = out.iter().position(|a| a == "--").unwrap_or(out.len());
        let only = out[..dash].iter().position(|a| a == "--only");
        match only {
            Some(i) if i + 1 < dash => {
                let mut have: Vec<String> = out[i + 1].split(',').map(str::to_string).collect();
                for n in names {
                    if !have.contains(n) {
                        have.push(n.clone());
                    }
                }
                out[i + 1] = have.join(",");
            }
            _ => {
                out.insert(1, "--only".into());
                out.insert(2, names.join(","));
            }
        }
        return (command.to_string(), out);
    }
    let mut out = vec![
        "exec".to_string(),
        "--only".to_string(),
        names.join(","),
        "--redact".to_string(),
        "--".to_string(),
        command.to_string(),
    ];
    out.extend(args.iter().cloned());
    (PROGRAM.to_string(), out)
}

/// Whether a server already starts as `agentenv exec …`.
pub fn is_wrapped(command: &str, args: &[String]) -> bool {
    let base = command.rsplit('/').next().unwrap_or(command);
    base == PROGRAM && args.first().map(String::as_str) == Some("exec")
}

/// `text` with every change applied, or why it cannot be.
pub fn rewrite(place: &Place, text: &str, changes: &[Change]) -> Result<String, String> {
    if place.is_toml() {
        rewrite_toml(text, changes)
    } else {
        let mut t = text.to_string();
        for c in changes {
            t = rewrite_json(place.client, &t, c)?;
        }
        Ok(t)
    }
}

fn parse(text: &str) -> Result<Node, String> {
    jsonedit::parse(text)?.ok_or_else(|| "the file is empty".to_string())
}

/// The server's object in a freshly parsed tree.
fn server<'a>(root: &'a Node, path: &[String]) -> Result<&'a Node, String> {
    let mut n = root;
    for k in path {
        n = n
            .get(k)
            .ok_or_else(|| format!("the server moved while it was edited ({k})"))?;
    }
    Ok(n)
}

/// The leading blanks of the line `at` is on.
fn indent_at(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect()
}

/// `items` as a JSON array in the manner of `old` (one line or one item
/// per line).
fn render_array(text: &str, old: Option<&Node>, items: &[String]) -> String {
    let value = serde_json::Value::Array(
        items
            .iter()
            .map(|s| serde_json::Value::String(s.clone()))
            .collect(),
    );
    let style = jsonedit::Style::of(text);
    match old {
        Some(n) if text[n.start..n.end].contains('\n') => {
            jsonedit::render(&value, &style, &indent_at(text, n.start))
        }
        Some(n) => {
            let sep = if text[n.start..n.end].contains(", ") || n.items().len() < 2 {
                ", "
            } else {
                ","
            };
            let parts: Vec<String> = items
                .iter()
                .map(|s| serde_json::to_string(s).expect("a string serializes"))
                .collect();
            format!("[{}]", parts.join(sep))
        }
        None => {
            let parts: Vec<String> = items
                .iter()
                .map(|s| serde_json::to_string(s).expect("a string serializes"))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn strings(n: &Node) -> Vec<String> {
    n.items()
        .iter()
        .filter_map(|i| i.as_str().map(str::to_string))
        .collect()
}

fn rewrite_json(client: Client, text: &str, c: &Change) -> Result<String, String> {
    let env_key = if client == Client::OpenCode {
        "environment"
    } else {
        "env"
    };
    let mut t = text.to_string();
    // 1. The moved keys out of env (each occurrence, one at a time).
    for name in &c.names {
        loop {
            let root = parse(&t)?;
            let s = server(&root, &c.path)?;
            let Some(env) = s.get(env_key) else { break };
            let Some(i) = env.members().iter().position(|m| &m.key == name) else {
                break;
            };
            t = jsonedit::remove_entry(&t, env, i);
        }
    }
    // 2. The command line.
    let root = parse(&t)?;
    let s = server(&root, &c.path)?;
    let command = s
        .get("command")
        .ok_or_else(|| "the server has no command (a remote server?)".to_string())?;
    if client == Client::OpenCode {
        let all = strings(command);
        let Some((cmd, args)) = all.split_first() else {
            return Err("the server's command array is empty".into());
        };
        let (prog, new_args) = wrap(cmd, args, &c.names);
        let mut items = vec![prog];
        items.extend(new_args);
        let with = render_array(&t, Some(command), &items);
        return Ok(jsonedit::replace(&t, command, &with));
    }
    let Some(cmd) = command.as_str() else {
        return Err("the server's command is not a string".into());
    };
    let old_args = s.get("args");
    let args = old_args.map(strings).unwrap_or_default();
    let (prog, new_args) = wrap(cmd, &args, &c.names);
    let prog_json = serde_json::to_string(&prog).expect("a string serializes");
    // Edit the later span first so the earlier one's offsets hold.
    match old_args {
        Some(a) if a.start > command.start => {
            let with = render_array(&t, Some(a), &new_args);
            t = jsonedit::replace(&t, a, &with);
            let root = parse(&t)?;
            let command = server(&root, &c.path)?.get("command").expect("still there");
            t = jsonedit::replace(&t, command, &prog_json);
        }
        Some(a) => {
            let with = render_array(&t, Some(a), &new_args);
            let (cs, ce) = (command.start, command.end);
            t = jsonedit::splice(&t, cs, ce, &prog_json);
            let root = parse(&t)?;
            let a = server(&root, &c.path)?.get("args").expect("still there");
            t = jsonedit::replace(&t, a, &with);
        }
        None => {
            let (cs, ce) = (command.start, command.end);
            t = jsonedit::splice(&t, cs, ce, &prog_json);
            let root = parse(&t)?;
            let s = server(&root, &c.path)?;
            let value = serde_json::Value::Array(
                new_args
                    .into_iter()
                    .map(serde_json::Value::String)
                    .collect(),
            );
            t = jsonedit::add_member(&t, s, &jsonedit::Style::of(&t), "args", &value);
        }
    }
    Ok(t)
}

fn rewrite_toml(text: &str, changes: &[Change]) -> Result<String, String> {
    use toml_edit::{Array, DocumentMut, Item, Value};

    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| super::toml_error(text, &e))?;
    for c in changes {
        let mut item: &mut Item = doc.as_item_mut();
        for k in &c.path {
            item = item
                .as_table_like_mut()
                .and_then(|t| t.get_mut(k))
                .ok_or_else(|| format!("no table {k}"))?;
        }
        let s = item
            .as_table_like_mut()
            .ok_or_else(|| "the server is not a table".to_string())?;
        if let Some(env) = s.get_mut("env").and_then(|e| e.as_table_like_mut()) {
            for n in &c.names {
                env.remove(n);
            }
        }
        let cmd = s
            .get("command")
            .and_then(|v| v.as_str())
            .ok_or_else(|| "the server has no command (a remote server?)".to_string())?
            .to_string();
        let args: Vec<String> = s
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let (prog, new_args) = wrap(&cmd, &args, &c.names);
        let mut arr = Array::new();
        for a in new_args {
            arr.push(a);
        }
        set_keeping_decor(s, "command", Value::from(prog));
        set_keeping_decor(s, "args", Value::Array(arr));
    }
    Ok(doc.to_string())
}

/// Set `key` of a TOML table to `value`, keeping the old value's
/// surrounding blanks and comments; a new key is added at the end.
fn set_keeping_decor(t: &mut dyn toml_edit::TableLike, key: &str, mut value: toml_edit::Value) {
    match t.get_mut(key).and_then(|i| i.as_value_mut()) {
        Some(v) => {
            *value.decor_mut() = v.decor().clone();
            *v = value;
        }
        None => {
            t.insert(key, toml_edit::Item::Value(value));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::test_place as place;

    /// `text` (of `client`) with the server at `path` migrated for `names`.
    fn edit(client: Client, text: &str, path: &[&str], names: &[&str]) -> String {
        let c = Change {
            path: path.iter().map(|s| s.to_string()).collect(),
            names: names.iter().map(|s| s.to_string()).collect(),
        };
        rewrite(&place(client), text, &[c]).unwrap()
    }

    #[test]
    fn wraps_once_and_adds_names_to_a_wrapped_server() {
        let (p, a) = wrap("npx", &["-y".into(), "s".into()], &["A".into()]);
        assert_eq!(p, "agentenv");
        assert_eq!(
            a,
            ["exec", "--only", "A", "--redact", "--", "npx", "-y", "s"]
        );
        let (p2, a2) = wrap(&p, &a, &["B".into(), "A".into()]);
        assert_eq!(p2, "agentenv");
        assert_eq!(
            a2,
            ["exec", "--only", "A,B", "--redact", "--", "npx", "-y", "s"]
        );
    }

    #[test]
    fn json_edit_keeps_every_other_byte() {
        let text = "{\n  \"other\": {\"n\": 1e400},\n  \"mcpServers\": {\n    \"gh\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"server-github\"],\n      \"env\": {\n        \"GH\": \"ghp_x\",\n        \"LOG\": \"debug\"\n      }\n    },\n    \"b\": {\"command\": \"x\"}\n  }\n}\n";
        let out = edit(Client::Claude, text, &["mcpServers", "gh"], &["GH"]);
        assert_eq!(
            out,
            "{\n  \"other\": {\"n\": 1e400},\n  \"mcpServers\": {\n    \"gh\": {\n      \"command\": \"agentenv\",\n      \"args\": [\"exec\", \"--only\", \"GH\", \"--redact\", \"--\", \"npx\", \"-y\", \"server-github\"],\n      \"env\": {\n        \"LOG\": \"debug\"\n      }\n    },\n    \"b\": {\"command\": \"x\"}\n  }\n}\n"
        );
        // No args yet; OpenCode's command array.
        let t = r#"{"mcpServers": {"s": {"command": "srv", "env": {"K": "v"}}}}"#;
        let out = edit(Client::Cursor, t, &["mcpServers", "s"], &["K"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["mcpServers"]["s"]["command"], "agentenv");
        assert_eq!(v["mcpServers"]["s"]["args"][5], "srv");
        assert_eq!(v["mcpServers"]["s"]["env"], serde_json::json!({}));
        let t = r#"{"mcp": {"o": {"type": "local", "command": ["bun", "s.js"], "environment": {"K": "v", "P": "1"}}}}"#;
        let out = edit(Client::OpenCode, t, &["mcp", "o"], &["K"]);
        assert_eq!(
            out,
            r#"{"mcp": {"o": {"type": "local", "command": ["agentenv", "exec", "--only", "K", "--redact", "--", "bun", "s.js"], "environment": {"P": "1"}}}}"#
        );
    }

    #[test]
    fn toml_edit_keeps_every_other_byte() {
        let text = "# my codex\nmodel = \"o3\"   # keep\n\n[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"-y\", \"server-github\"]\nenv = { \"GH\" = \"ghp_x\", LOG = \"debug\" }\n\n[mcp_servers.other]\ncommand = \"x\"  # comment\n\n[mcp_servers.t.env]\nK = \"v\"\n";
        let out = edit(Client::Codex, text, &["mcp_servers", "gh"], &["GH"]);
        assert_eq!(
            out,
            "# my codex\nmodel = \"o3\"   # keep\n\n[mcp_servers.gh]\ncommand = \"agentenv\"\nargs = [\"exec\", \"--only\", \"GH\", \"--redact\", \"--\", \"npx\", \"-y\", \"server-github\"]\nenv = { LOG = \"debug\" }\n\n[mcp_servers.other]\ncommand = \"x\"  # comment\n\n[mcp_servers.t.env]\nK = \"v\"\n"
        );
    }
}
