//! MCP server configurations (docs/mcp.md#mcp-servers-no-plaintext-key-in-any-clients-configuration): where
//! every client keeps them ([`places`]), the servers in one file
//! ([`read`]), the literal secrets in a server ([`find`]) and the rewrite
//! that moves them out ([`edit`]).
//!
//! A server's strings are looked at where a client passes them on: `env`
//! (OpenCode: `environment`), `headers` (Codex: `http_headers`,
//! `bearer_token`), `args` (OpenCode: the `command` array after its first
//! item) and its URL (`url`, `httpUrl`, `serverUrl`). Nothing here prints;
//! no value leaves the module except as the [`Literal::value`] that
//! `migrate` hands to the store writer.

pub mod edit;
pub mod find;
pub(crate) mod jobs;
pub mod migrate;

use std::path::{Path, PathBuf};

/// The client a configuration file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Client {
    /// Claude Code: `~/.claude.json`, `.mcp.json`.
    Claude,
    /// Codex: `~/.codex/config.toml`, `.codex/config.toml`.
    Codex,
    /// Gemini CLI: `~/.gemini/settings.json`, `.gemini/settings.json`.
    Gemini,
    /// Cursor: `~/.cursor/mcp.json`, `.cursor/mcp.json`.
    Cursor,
    /// VS Code: `.vscode/mcp.json` (and the user profile's `mcp.json`).
    VsCode,
    /// OpenCode: `opencode.json` (and `~/.config/opencode/opencode.json`).
    OpenCode,
}

impl Client {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::Cursor => "cursor",
            Client::VsCode => "vscode",
            Client::OpenCode => "opencode",
        }
    }

    /// The key that holds the servers in its JSON files.
    fn servers_key(self) -> &'static str {
        match self {
            Client::VsCode => "servers",
            Client::OpenCode => "mcp",
            _ => "mcpServers",
        }
    }
}

/// User scope (the home directory's files) or a project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A file under the home directory.
    User,
    /// A file of the project directory.
    Project,
}

/// One configuration file a client reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The file.
    pub path: PathBuf,
    /// Whose it is.
    pub client: Client,
    /// User or project.
    pub scope: Scope,
}

impl Place {
    /// TOML (Codex) or JSON (every other client).
    pub fn is_toml(&self) -> bool {
        self.client == Client::Codex
    }
}

/// Every file the clients read their MCP servers from, user scope first,
/// then the project's (`project`, when given and not the home directory
/// itself). `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME` and `$XDG_CONFIG_HOME` move
/// theirs. Files that do not exist are listed too (the caller skips them).
pub fn places(env: &crate::core::Env, project: Option<&Path>) -> Vec<Place> {
    let abs = |k: &str| {
        crate::core::get(env, k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let home = abs("HOME");
    let mut user: Vec<(PathBuf, Client)> = Vec::new();
    if let Some(home) = &home {
        let claude = abs("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home.clone());
        let codex = abs("CODEX_HOME").unwrap_or_else(|| home.join(".codex"));
        let config = abs("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config"));
        user = vec![
            (claude.join(".claude.json"), Client::Claude),
            (codex.join("config.toml"), Client::Codex),
            (home.join(".gemini/settings.json"), Client::Gemini),
            (home.join(".cursor/mcp.json"), Client::Cursor),
            (config.join("Code/User/mcp.json"), Client::VsCode),
            (config.join("opencode/opencode.json"), Client::OpenCode),
        ];
    }
    let project: Vec<(PathBuf, Client)> = match project {
        Some(p) if home.as_deref() != Some(p) => PROJECT_FILES
            .iter()
            .map(|(rel, c)| (p.join(rel), *c))
            .collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<Place> = Vec::new();
    let scoped = user
        .into_iter()
        .map(|x| (x, Scope::User))
        .chain(project.into_iter().map(|x| (x, Scope::Project)));
    for ((path, client), scope) in scoped {
        if !out.iter().any(|p| p.path == path) {
            out.push(Place {
                path,
                client,
                scope,
            });
        }
    }
    out
}

/// A project's configuration files, under its directory.
const PROJECT_FILES: [(&str, Client); 6] = [
    (".mcp.json", Client::Claude),
    (".codex/config.toml", Client::Codex),
    (".gemini/settings.json", Client::Gemini),
    (".cursor/mcp.json", Client::Cursor),
    (".vscode/mcp.json", Client::VsCode),
    ("opencode.json", Client::OpenCode),
];

/// A place for the unit tests (`/x`, user scope).
#[cfg(test)]
pub(crate) fn test_place(client: Client) -> Place {
    Place {
        path: PathBuf::from("/x"),
        client,
        scope: Scope::User,
    }
}

/// The project directory of `cwd`: the nearest directory upwards (below
/// `home`) that holds `.git`, `.agents` or one of the project files of
/// [`places`]; else `cwd` itself.
pub fn project_of(cwd: &Path, home: Option<&Path>) -> PathBuf {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if Some(d) == home {
            break;
        }
        let marks = [".git", ".agents"]
            .into_iter()
            .chain(PROJECT_FILES.iter().map(|(rel, _)| *rel));
        if marks.into_iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// Where a string sits in a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Field {
    /// `env.KEY` (OpenCode: `environment.KEY`): what `migrate` moves.
    Env(String),
    /// `headers.KEY` (Codex: `http_headers.KEY`, or `bearer_token`).
    Header(String),
    /// `args[i]` (OpenCode: `command[i + 1]`).
    Arg(usize),
    /// The server's URL (`url`, `httpUrl`, `serverUrl`).
    Url(String),
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Field::Env(k) => write!(f, "env {k}"),
            Field::Header(k) => write!(f, "header {k}"),
            Field::Arg(i) => write!(f, "args[{i}]"),
            Field::Url(k) => write!(f, "{k}"),
        }
    }
}

/// One string of a server.
#[derive(Clone, PartialEq, Eq)]
pub struct Literal {
    /// Where it is.
    pub field: Field,
    /// The string as the client reads it (decoded).
    pub value: String,
}

impl std::fmt::Debug for Literal {
    // Never the value.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Literal")
            .field("field", &self.field)
            .finish()
    }
}

/// One server entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The keys from the file's root to the server's object
    /// (`["projects", "/p", "mcpServers", "gh"]`, `["mcp_servers", "gh"]`).
    pub path: Vec<String>,
    /// Its name (the last key of `path`).
    pub name: String,
    /// For `~/.claude.json`'s `projects.*.mcpServers`: the project.
    pub project: Option<String>,
    /// The program (OpenCode: `command[0]`); `None` for a remote server.
    pub command: Option<String>,
    /// Every string where a client passes it on, in file order.
    pub literals: Vec<Literal>,
}

impl Server {
    /// `server NAME` (with its project for `~/.claude.json`'s projects).
    pub fn label(&self) -> String {
        match &self.project {
            Some(p) => format!("server {} (project {p})", self.name),
            None => format!("server {}", self.name),
        }
    }

    /// The arguments (`args`), in order.
    #[cfg(test)]
    pub fn args(&self) -> Vec<&str> {
        self.literals
            .iter()
            .filter_map(|l| match l.field {
                Field::Arg(_) => Some(l.value.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError(pub String);

/// The servers of one file's text (`text` is the whole file).
pub fn read(place: &Place, text: &str) -> Result<Vec<Server>, ReadError> {
    if place.is_toml() {
        read_toml(text)
    } else {
        read_json(place.client, text)
    }
}

fn read_json(client: Client, text: &str) -> Result<Vec<Server>, ReadError> {
    use crate::jsonedit;
    let Some(root) = jsonedit::parse(text).map_err(ReadError)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let key = client.servers_key();
    if let Some(servers) = root.get(key) {
        json_servers(client, servers, vec![key.to_string()], None, &mut out);
    }
    if client == Client::Claude {
        if let Some(projects) = root.get("projects") {
            for m in projects.members() {
                if let Some(servers) = m.value.get("mcpServers") {
                    let path = vec![
                        "projects".to_string(),
                        m.key.clone(),
                        "mcpServers".to_string(),
                    ];
                    json_servers(client, servers, path, Some(m.key.clone()), &mut out);
                }
            }
        }
    }
    Ok(out)
}

fn json_servers(
    client: Client,
    servers: &crate::jsonedit::Node,
    path: Vec<String>,
    project: Option<String>,
    out: &mut Vec<Server>,
) {
    for m in servers.members() {
        let s = &m.value;
        if !s.is_object() {
            continue;
        }
        let mut literals = Vec::new();
        let mut command = None;
        let env_key = if client == Client::OpenCode {
            "environment"
        } else {
            "env"
        };
        for f in s.members() {
            let v = &f.value;
            match f.key.as_str() {
                "command" if client == Client::OpenCode && v.is_array() => {
                    for (i, item) in v.items().iter().enumerate() {
                        match (i, item.as_str()) {
                            (0, Some(c)) => command = Some(c.to_string()),
                            (i, Some(a)) if i > 0 => literals.push(Literal {
                                field: Field::Arg(i - 1),
                                value: a.to_string(),
                            }),
                            _ => {}
                        }
                    }
                }
                "command" => command = v.as_str().map(str::to_string),
                "args" => {
                    for (i, item) in v.items().iter().enumerate() {
                        if let Some(a) = item.as_str() {
                            literals.push(Literal {
                                field: Field::Arg(i),
                                value: a.to_string(),
                            });
                        }
                    }
                }
                k if k == env_key => {
                    for e in v.members() {
                        if let Some(val) = e.value.as_str() {
                            literals.push(Literal {
                                field: Field::Env(e.key.clone()),
                                value: val.to_string(),
                            });
                        }
                    }
                }
                "headers" => {
                    for e in v.members() {
                        if let Some(val) = e.value.as_str() {
                            literals.push(Literal {
                                field: Field::Header(e.key.clone()),
                                value: val.to_string(),
                            });
                        }
                    }
                }
                "url" | "httpUrl" | "serverUrl" => {
                    if let Some(u) = v.as_str() {
                        literals.push(Literal {
                            field: Field::Url(f.key.clone()),
                            value: u.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
        let mut p = path.clone();
        p.push(m.key.clone());
        out.push(Server {
            path: p,
            name: m.key.clone(),
            project: project.clone(),
            command,
            literals,
        });
    }
}

fn read_toml(text: &str) -> Result<Vec<Server>, ReadError> {
    let doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| ReadError(toml_error(text, &e)))?;
    let mut out = Vec::new();
    let Some(servers) = doc.get("mcp_servers").and_then(|i| i.as_table_like()) else {
        return Ok(out);
    };
    for (name, item) in servers.iter() {
        let Some(s) = item.as_table_like() else {
            continue;
        };
        let mut literals = Vec::new();
        let mut command = None;
        for (k, v) in s.iter() {
            match k {
                "command" => command = v.as_str().map(str::to_string),
                "args" => {
                    if let Some(a) = v.as_array() {
                        for (i, x) in a.iter().enumerate() {
                            if let Some(x) = x.as_str() {
                                literals.push(Literal {
                                    field: Field::Arg(i),
                                    value: x.to_string(),
                                });
                            }
                        }
                    }
                }
                "env" | "http_headers" => {
                    if let Some(t) = v.as_table_like() {
                        for (ek, ev) in t.iter() {
                            if let Some(ev) = ev.as_str() {
                                let field = if k == "env" {
                                    Field::Env(ek.to_string())
                                } else {
                                    Field::Header(ek.to_string())
                                };
                                literals.push(Literal {
                                    field,
                                    value: ev.to_string(),
                                });
                            }
                        }
                    }
                }
                "bearer_token" => {
                    if let Some(b) = v.as_str() {
                        literals.push(Literal {
                            field: Field::Header("bearer_token".into()),
                            value: b.to_string(),
                        });
                    }
                }
                "url" => {
                    if let Some(u) = v.as_str() {
                        literals.push(Literal {
                            field: Field::Url("url".into()),
                            value: u.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
        out.push(Server {
            path: vec!["mcp_servers".into(), name.to_string()],
            name: name.to_string(),
            project: None,
            command,
            literals,
        });
    }
    Ok(out)
}

/// A TOML error as line and column only (toml_edit's own message quotes
/// the offending text, which may be a value).
pub(crate) fn toml_error(text: &str, e: &toml_edit::TomlError) -> String {
    match e.span() {
        Some(span) => {
            let (l, c) = crate::jsonedit::line_col(text.as_bytes(), span.start);
            format!("TOML syntax error at line {l}, column {c}")
        }
        None => "TOML syntax error".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_place as place;

    #[test]
    fn reads_every_clients_shape() {
        let claude = r#"{"mcpServers":{"a":{"command":"npx","args":["-y","s"],"env":{"K":"v"}}},
            "projects":{"/p":{"mcpServers":{"b":{"type":"http","url":"https://h","headers":{"Authorization":"Bearer t"}}}}}}"#;
        let s = read(&place(Client::Claude), claude).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].command.as_deref(), Some("npx"));
        assert_eq!(s[0].args(), ["-y", "s"]);
        assert_eq!(s[1].path, ["projects", "/p", "mcpServers", "b"]);
        assert_eq!(s[1].label(), "server b (project /p)");
        assert_eq!(s[1].literals[0].field, Field::Url("url".into()));
        let vs = r#"{"servers":{"g":{"command":"x","env":{"T":"1"}}},"inputs":[]}"#;
        assert_eq!(
            read(&place(Client::VsCode), vs).unwrap()[0].literals[0].field,
            Field::Env("T".into())
        );
        let oc = r#"{"mcp":{"o":{"type":"local","command":["bun","srv.js","--k"],"environment":{"E":"z"}}}}"#;
        let o = &read(&place(Client::OpenCode), oc).unwrap()[0];
        assert_eq!(o.command.as_deref(), Some("bun"));
        assert_eq!(o.args(), ["srv.js", "--k"]);
        assert_eq!(o.literals[2].field, Field::Env("E".into()));
        let codex = "[mcp_servers.gh]\ncommand = \"npx\"\nargs = [\"a\"]\nenv = { T = \"v\" }\n\n[mcp_servers.r]\nurl = \"https://x\"\nhttp_headers = { \"X-Key\" = \"k\" }\n";
        let c = read(&place(Client::Codex), codex).unwrap();
        assert_eq!(c[0].path, ["mcp_servers", "gh"]);
        assert_eq!(c[0].literals[1].field, Field::Env("T".into()));
        assert_eq!(c[1].literals[1].field, Field::Header("X-Key".into()));
    }

    #[test]
    fn errors_name_a_place_not_text() {
        let e = read(&place(Client::Codex), "a = \"zqSECRET\nb=").unwrap_err();
        assert!(e.0.contains("line 1"), "{e:?}");
        assert!(!e.0.contains("zqSECRET"));
        let e = read(&place(Client::Claude), "{\"a\": zqSECRET}").unwrap_err();
        assert!(!e.0.contains("zqSECRET"));
    }
}
