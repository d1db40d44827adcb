//! `agentenv mcp scan`, `agentenv mcp migrate` (docs/mcp.md), `exec --only`
//! and `launch --only`, and audit's `--staged`, `--repo`, MCP default places
//! and missing paths: a home and a project with every client's MCP
//! configurations, literal secrets planted among near misses.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use support::Tree;

/// A value the store holds (found by value, not by shape).
const STORED: &str = "zqStoredCanary-8c1f2e";

/// The planted literals: (env key, value), one per migrated server.
fn planted() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        (
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghp_zq0123456789abcdefghijABCDEFGHIJ0123",
        ),
        ("LINEAR_API_KEY", "lin_api_zq0123456789abcdefghijABCDEFGHIJ"),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-zq0123456789abcdefABCDEF-xyz",
        ),
        ("SLACK_BOT_TOKEN", "xoxb-123456789012-zqabcdefABCDEF"),
        ("AWS_ACCESS_KEY_ID", "AKIAZQ0123456789ABCD"),
        ("SERVICE_KEY", STORED),
        (
            "GOOGLE_MAPS_API_KEY",
            "AIzaSyZQ-0123456789abcdefghijABCDEFGHIJ",
        ),
        ("GITLAB_PERSONAL_ACCESS_TOKEN", "glpat-zq0123456789abcdefAB"),
        ("OPENAI_API_KEY", "sk-proj-zq0123456789abcdefABCDEF"),
        (
            "GITHUB_TOKEN",
            "github_pat_11ZQ0123456789_abcdefghijklmnopqrstuv",
        ),
    ])
}

/// The expected findings: (file under the tree, server label, env key).
const EXPECTED: &[(&str, &str, &str)] = &[
    (
        "home/.claude.json",
        "server github",
        "GITHUB_PERSONAL_ACCESS_TOKEN",
    ),
    (
        "home/.claude.json",
        "server linear (project /work/x)",
        "LINEAR_API_KEY",
    ),
    ("home/.codex/config.toml", "server slack", "SLACK_BOT_TOKEN"),
    ("home/.codex/config.toml", "server aws", "AWS_ACCESS_KEY_ID"),
    ("home/.gemini/settings.json", "server svc", "SERVICE_KEY"),
    (
        "home/.cursor/mcp.json",
        "server gitlab",
        "GITLAB_PERSONAL_ACCESS_TOKEN",
    ),
    ("proj/.mcp.json", "server anthropic", "ANTHROPIC_API_KEY"),
    (
        "proj/.gemini/settings.json",
        "server maps",
        "GOOGLE_MAPS_API_KEY",
    ),
    ("proj/.vscode/mcp.json", "server openai", "OPENAI_API_KEY"),
    ("proj/opencode.json", "server gh", "GITHUB_TOKEN"),
];

/// Every configuration file of the fixture.
const FILES: &[&str] = &[
    "home/.claude.json",
    "home/.codex/config.toml",
    "home/.gemini/settings.json",
    "home/.cursor/mcp.json",
    "proj/.mcp.json",
    "proj/.gemini/settings.json",
    "proj/.cursor/mcp.json",
    "proj/.vscode/mcp.json",
    "proj/opencode.json",
];

/// The stub server: says which of the planted variables it got, then
/// prints its own (argument 1) raw, in a JSON-RPC line, and base64.
const SERVER: &str = r#"#!/bin/sh
for v in GITHUB_PERSONAL_ACCESS_TOKEN LINEAR_API_KEY ANTHROPIC_API_KEY SLACK_BOT_TOKEN AWS_ACCESS_KEY_ID SERVICE_KEY GOOGLE_MAPS_API_KEY GITLAB_PERSONAL_ACCESS_TOKEN OPENAI_API_KEY GITHUB_TOKEN MY_STORED; do
  eval "x=\${$v:-}"
  [ -n "$x" ] && echo "got $v"
done
eval "own=\${$1:-}"
echo "value $own"
printf '{"jsonrpc":"2.0","id":1,"result":{"ok":true,"n":3000,"k":"%s"}}\n' "$own"
printf '%s' "$own" | base64 -w0; echo
"#;

/// The home and project of every client, with the planted literals and
/// the near misses (`${VAR}`, `{env:VAR}`, `${env:VAR}`, `${input:…}`,
/// `<your-token>`, `xxx`, `true`, `3000`, short words) that are not
/// findings. The store also holds `true` and `3000`, which scan does not
/// look for and the masker does not mask.
fn fixture() -> Tree {
    let t = Tree::session().dir("proj/.git");
    let p = planted();
    let srv = t.exe("proj/srv.sh", SERVER);
    let s = |k: &str| format!(r#""command": "sh", "args": ["{}", "{k}"]"#, srv.display());
    t.write(
        "home/.agents/env",
        format!("MY_STORED={STORED}\nFEATURE_ENABLED=true\nTIMEOUT=3000\n"),
    );
    t.write(
        "home/.claude.json",
        format!(
            r#"{{
  "numStartups": 12,
  "mcpServers": {{
    "github": {{
      "type": "stdio",
      {},
      "env": {{
        "GITHUB_PERSONAL_ACCESS_TOKEN": "{}",
        "LOG_LEVEL": "debug"
      }}
    }},
    "near": {{"command": "npx", "args": ["-y", "server-x", "--token", "${{X_TOKEN}}"], "env": {{"GH_TOKEN": "${{GITHUB_TOKEN}}", "ENABLED": "true", "TIMEOUT": "3000"}}}}
  }},
  "projects": {{
    "/work/x": {{
      "allowedTools": [],
      "mcpServers": {{
        "linear": {{{}, "env": {{"LINEAR_API_KEY": "{}"}}}}
      }}
    }}
  }},
  "zz_after": {{"tipsHistory": {{"a": 1}}}}
}}
"#,
            s("GITHUB_PERSONAL_ACCESS_TOKEN"),
            p["GITHUB_PERSONAL_ACCESS_TOKEN"],
            s("LINEAR_API_KEY"),
            p["LINEAR_API_KEY"]
        ),
    );
    t.write(
        "home/.codex/config.toml",
        format!(
            r#"# Codex
model = "o3"  # keep this comment

[mcp_servers.slack]
command = "sh"
args = ["{srv}", "SLACK_BOT_TOKEN"]
env = {{ SLACK_BOT_TOKEN = "{}", SLACK_TEAM_ID = "T01234" }}

[mcp_servers.aws]
command = "sh"
args = ["{srv}", "AWS_ACCESS_KEY_ID"]

[mcp_servers.aws.env]
AWS_ACCESS_KEY_ID = "{}"
AWS_REGION = "eu-west-1"

[mcp_servers.zz_after]
command = "npx"
args = ["-y", "other"]
env = {{ DEBUG = "true", PORT = "3000", API_KEY = "<your-api-key>" }}
"#,
            p["SLACK_BOT_TOKEN"],
            p["AWS_ACCESS_KEY_ID"],
            srv = srv.display()
        ),
    );
    t.write(
        "home/.gemini/settings.json",
        format!(
            r#"{{"theme": "dark", "mcpServers": {{"svc": {{{}, "env": {{"SERVICE_KEY": "{}"}}}}, "zz_after": {{"httpUrl": "https://mcp.example.com/mcp", "headers": {{"Authorization": "Bearer $API_TOKEN"}}}}}}}}
"#,
            s("SERVICE_KEY"),
            p["SERVICE_KEY"]
        ),
    );
    t.write(
        "home/.cursor/mcp.json",
        format!(
            "{{\n\t\"mcpServers\": {{\n\t\t\"gitlab\": {{\n\t\t\t{},\n\t\t\t\"env\": {{\"GITLAB_PERSONAL_ACCESS_TOKEN\": \"{}\"}}\n\t\t}},\n\t\t\"zz_after\": {{\"url\": \"https://h.example/sse\", \"headers\": {{\"X-Api-Key\": \"${{env:CURSOR_KEY}}\"}}}}\n\t}}\n}}\n",
            s("GITLAB_PERSONAL_ACCESS_TOKEN"),
            p["GITLAB_PERSONAL_ACCESS_TOKEN"]
        ),
    );
    t.write(
        "proj/.mcp.json",
        format!(
            r#"{{
  "mcpServers": {{
    "anthropic": {{
      {},
      "env": {{
        "ANTHROPIC_API_KEY": "{}"
      }}
    }},
    "zz_after": {{
      "command": "npx",
      "env": {{"GITHUB_TOKEN": "${{GITHUB_TOKEN}}", "MODE": "xxx", "NAME": "short"}}
    }}
  }}
}}
"#,
            s("ANTHROPIC_API_KEY"),
            p["ANTHROPIC_API_KEY"]
        ),
    );
    t.write(
        "proj/.gemini/settings.json",
        format!(
            r#"{{"mcpServers": {{"maps": {{{}, "env": {{"GOOGLE_MAPS_API_KEY": "{}"}}}}, "zz_after": {{"command": "x", "env": {{"TOKEN": "$TOKEN"}}}}}}}}
"#,
            s("GOOGLE_MAPS_API_KEY"),
            p["GOOGLE_MAPS_API_KEY"]
        ),
    );
    t.write(
        "proj/.cursor/mcp.json",
        r#"{"mcpServers": {"zz_after": {"url": "https://h.example/mcp?api_key=${KEY}", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}}}
"#,
    );
    t.write(
        "proj/.vscode/mcp.json",
        format!(
            r#"{{
  "inputs": [{{"type": "promptString", "id": "key", "password": true}}],
  "servers": {{
    "openai": {{
      {},
      "env": {{"OPENAI_API_KEY": "{}"}}
    }},
    "zz_after": {{"command": "x", "env": {{"KEY": "${{input:key}}", "PLACE": "<your-token>", "ON": "false"}}}}
  }}
}}
"#,
            s("OPENAI_API_KEY"),
            p["OPENAI_API_KEY"]
        ),
    );
    t.write(
        "proj/opencode.json",
        format!(
            r#"{{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {{
    "gh": {{
      "type": "local",
      "command": ["sh", "{}", "GITHUB_TOKEN"],
      "environment": {{"GITHUB_TOKEN": "{}"}}
    }},
    "zz_after": {{"type": "local", "command": ["x"], "environment": {{"OTHER": "{{env:OTHER}}", "X": "xxx", "KEY": "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}}
  }}
}}
"#,
            srv.display(),
            p["GITHUB_TOKEN"]
        ),
    );
    t
}

/// The finding lines of `mcp scan`'s text (not the summary).
fn finding_lines(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| !l.starts_with("mcp scan:"))
        .collect()
}

#[test]
fn scan_finds_every_planted_literal_and_no_near_miss() {
    let t = fixture();
    let mut run = t.agentenv(["mcp", "scan"]).status(1);
    for v in planted().values() {
        run = run.secret(v);
    }
    for (file, label, key) in EXPECTED {
        run = run.stdout_has(format!("$W/{file}: {label}: env {key} ("));
    }
    let ran = run
        .stdout_has("$W/home/.gemini/settings.json: server svc: env SERVICE_KEY (the value of MY_STORED in the stores)")
        .stdout_has("env GITHUB_PERSONAL_ACCESS_TOKEN (a GitHub token (ghp_))")
        .stdout_has("mcp scan: 10 literal secrets in 10 servers of 19 servers (9 files read")
        .stdout_lacks("zz_after")
        .stdout_lacks("server near")
        .stderr("")
        .run();
    assert_eq!(
        finding_lines(&ran.stdout).len(),
        EXPECTED.len(),
        "{}",
        ran.stdout
    );
    // JSON: the same findings, machine-readable.
    let ran = t
        .agentenv(["mcp", "scan", "--format", "json"])
        .status(1)
        .run();
    let j = ran.json_w();
    let f = j["findings"].as_array().unwrap();
    assert_eq!(f.len(), EXPECTED.len());
    for (file, _, key) in EXPECTED {
        assert!(
            f.iter().any(|x| x["file"] == format!("$W/{file}")
                && x["key"] == *key
                && x["field"] == "env"),
            "{file} {key}: {j:#}"
        );
    }
    for v in planted().values() {
        assert!(!ran.stdout.contains(v));
    }
}

#[test]
fn scan_is_clean_without_literals_and_reports_args_headers_urls() {
    let t = Tree::session().dir("proj/.git");
    t.agentenv(["mcp", "scan"])
        .stdout_has("mcp scan: 0 literal secrets in 0 servers of 0 servers (0 files read")
        .run();
    t.write(
        "proj/.mcp.json",
        r#"{"mcpServers": {
  "pg": {"command": "pg-mcp", "args": ["postgres://app:zqPgPassw0rd@db:5432/x"]},
  "cli": {"command": "x", "args": ["--api-key", "zqAbCd1234EfGh5678"]},
  "web": {"type": "http", "url": "https://h.example/mcp?token=zqTok3nValue99", "headers": {"Authorization": "Bearer zqAbCdEf0123456789"}},
  "ok": {"command": "x", "args": ["--port", "3000", "--verbose", "true"]}
}}
"#,
    );
    t.agentenv(["mcp", "scan"])
        .status(1)
        .stdout_has("$W/proj/.mcp.json: server pg: args[0] (a password in the URL)")
        .stdout_has("$W/proj/.mcp.json: server cli: args[1] (a literal under a secret's name)")
        .stdout_has("$W/proj/.mcp.json: server web: url (the URL's token parameter)")
        .stdout_has(
            "$W/proj/.mcp.json: server web: header Authorization (a literal under a secret's name)",
        )
        .stdout_lacks("server ok")
        .secret("zqPgPassw0rd")
        .secret("zqAbCd1234EfGh5678")
        .secret("zqTok3nValue99")
        .secret("zqAbCdEf0123456789")
        .run();
    // migrate leaves them, saying what to change by hand; nothing changes.
    let before = t.read("proj/.mcp.json");
    t.agentenv(["mcp", "migrate"])
        .status(1)
        .stdout_has("left $W/proj/.mcp.json: server pg: args[0] (a password in the URL): move the credential")
        .stdout_has("left $W/proj/.mcp.json: server web: header Authorization")
        .stdout_has("mcp migrate: 0 values moved in 0 files; 4 left to change by hand")
        .secret("zqPgPassw0rd")
        .secret("zqAbCdEf0123456789")
        .run();
    assert_eq!(t.read("proj/.mcp.json"), before);
    // An unparsable file is named with its line, never its text.
    t.write("proj/.mcp.json", "{\n  \"mcpServers\": zqBROKENsecret\n}\n");
    t.agentenv(["mcp", "scan"])
        .stderr_has("cannot parse $W/proj/.mcp.json: ")
        .stderr_has("line 2")
        .secret("zqBROKENsecret")
        .run();
}

/// The length of the common prefix and suffix of two byte strings.
fn common(a: &[u8], b: &[u8]) -> (usize, usize) {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (pre, suf)
}

#[cfg_attr(missing = "python3", ignore = "needs python3")]
#[test]
fn migrate_moves_every_literal_and_keeps_the_rest() {
    let Some(python) = support::tool("python3") else {
        return;
    };
    let t = fixture();
    let before: BTreeMap<&str, Vec<u8>> = FILES
        .iter()
        .map(|f| (*f, fs::read(t.path(f)).unwrap()))
        .collect();
    // --dry-run: the diff, values masked; nothing changes.
    let mut dry = t.agentenv(["mcp", "migrate", "--dry-run"]);
    for v in planted().values() {
        dry = dry.secret(v);
    }
    dry.stdout_has("--- $W/proj/.mcp.json\n+++ $W/proj/.mcp.json (migrated)\n")
        .stdout_has("-        \"ANTHROPIC_API_KEY\": \"[REDACTED:ANTHROPIC_API_KEY]\"\n")
        .stdout_has("+      \"command\": \"agentenv\", \"args\": [\"exec\", \"--only\", \"ANTHROPIC_API_KEY\", \"--redact\", \"--\", \"sh\", ")
        .stdout_has("-command = \"sh\"\n")
        .stdout_has("+command = \"agentenv\"\n")
        .stdout_has("+\t\t\t\"env\": {}\n")
        .stdout_has("mcp migrate: 10 values would move in 8 files; 0 left to change by hand (dry run: nothing changed)")
        .run();
    for f in FILES {
        assert_eq!(fs::read(t.path(f)).unwrap(), before[f], "{f} changed");
    }
    assert!(!t.path("home/.agents/.backup").exists());

    let mut run = t.agentenv(["mcp", "migrate"]);
    for v in planted().values() {
        run = run.secret(v);
    }
    run.stdout_has(
        "moved $W/proj/.mcp.json: server anthropic: env ANTHROPIC_API_KEY -> $W/home/.agents/env",
    )
    .stdout_has("mcp migrate: 10 values moved in 8 files; 0 left to change by hand\n")
    .run();

    // No form of any value is left in any configuration.
    for f in FILES {
        let bytes = fs::read(t.path(f)).unwrap();
        for (name, v) in planted() {
            for (form, needle) in agentenv::internals::mask::forms(v.as_bytes()) {
                assert!(
                    !bytes.windows(needle.len()).any(|w| w == needle.as_slice()),
                    "{f} still holds {name} ({form:?})"
                );
            }
        }
    }
    // Each parses (Python's json and tomllib), and the bytes before the
    // first migrated server and from the entry after the last one are the
    // same.
    for f in FILES {
        let module = if f.ends_with(".toml") {
            "import tomllib,sys; tomllib.load(open(sys.argv[1],'rb'))"
        } else {
            "import json,sys; json.load(open(sys.argv[1]))"
        };
        let ok = Command::new(&python)
            .args(["-c", module])
            .arg(t.path(f))
            .status()
            .unwrap();
        assert!(ok.success(), "{f} does not parse");
        let old = &before[f];
        let new = fs::read(t.path(f)).unwrap();
        if old == &new {
            continue;
        }
        let (pre, suf) = common(old, &new);
        let text = String::from_utf8_lossy(old);
        let first = EXPECTED
            .iter()
            .filter(|e| e.0 == *f)
            .map(|e| {
                let name = e.1.split(' ').nth(1).unwrap();
                let at = text
                    .find(&format!("\"{name}\""))
                    .or_else(|| text.find(&format!("[mcp_servers.{name}]")))
                    .unwrap();
                at
            })
            .min()
            .unwrap();
        let after = text.find("zz_after").unwrap();
        assert!(
            pre >= first,
            "{f}: a change before the first migrated server"
        );
        assert!(
            old.len() - suf <= after,
            "{f}: a change after the last migrated server"
        );
    }
    // The values are in the user store (0600), the backups private.
    let store = t.path("home/.agents/env");
    assert_eq!(
        fs::metadata(&store).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let stored = t.read("home/.agents/env");
    for (name, v) in planted() {
        assert!(
            stored.contains(&format!("{name}='{v}'")),
            "{name} not stored"
        );
    }
    assert!(stored.starts_with(&format!(
        "MY_STORED={STORED}\nFEATURE_ENABLED=true\nTIMEOUT=3000\n"
    )));
    let backups = t.path("home/.agents/.backup/mcp");
    let dirs: Vec<_> = fs::read_dir(&backups).unwrap().collect();
    assert_eq!(dirs.len(), 1);
    let dir = dirs[0].as_ref().unwrap().path();
    assert_eq!(
        fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    for e in fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // One backup per changed file (proj/.cursor/mcp.json had nothing).
    assert_eq!(fs::read_dir(&dir).unwrap().count(), FILES.len() - 1);

    // A second run changes nothing; scan is clean.
    let after: BTreeMap<&str, Vec<u8>> = FILES
        .iter()
        .map(|f| (*f, fs::read(t.path(f)).unwrap()))
        .collect();
    t.agentenv(["mcp", "migrate"])
        .stdout("mcp migrate: 0 values moved in 0 files; 0 left to change by hand\n")
        .run();
    for f in FILES {
        assert_eq!(fs::read(t.path(f)).unwrap(), after[f], "{f} changed again");
    }
    assert_eq!(t.read("home/.agents/env"), stored);
    t.agentenv(["mcp", "scan"])
        .stdout_has("mcp scan: 0 literal secrets")
        .run();

    // Each migrated server, started as its configuration now says, gets
    // its own variable and no other sensitive one; its output is masked
    // and a JSON-RPC line stays JSON.
    let servers = migrated_commands(&t);
    assert_eq!(servers.len(), EXPECTED.len());
    for (own, argv) in servers {
        assert_eq!(argv[0], "agentenv", "{own}: {argv:?}");
        assert_eq!(argv[1..5], ["exec", "--only", own.as_str(), "--redact"]);
        let ran = t.agentenv(&argv[1..]).secret(planted()[own.as_str()]).run();
        let got: Vec<&str> = ran
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("got "))
            .collect();
        assert_eq!(got, [own.as_str()], "{own}: {}", ran.stdout);
        assert!(
            ran.stdout.contains("value [REDACTED:"),
            "{own}: {}",
            ran.stdout
        );
        let line = ran
            .stdout
            .lines()
            .find(|l| l.starts_with("{\"jsonrpc\""))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["result"]["ok"], true);
        assert_eq!(v["result"]["n"], 3000);
        let b64 = ran.stdout.lines().last().unwrap();
        assert!(
            b64.contains("[REDACTED:"),
            "{own}: base64 not masked: {b64}"
        );
    }
}

/// (the variable, argv) of each migrated server, read back from the files.
fn migrated_commands(t: &Tree) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    for (file, label, key) in EXPECTED {
        let name = label.split(' ').nth(1).unwrap();
        let text = t.read(file);
        let argv: Vec<String> = if file.ends_with(".toml") {
            let doc: toml_edit::DocumentMut = text.parse().unwrap();
            let s = &doc["mcp_servers"][name];
            let mut v = vec![s["command"].as_str().unwrap().to_string()];
            v.extend(
                s["args"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| a.as_str().unwrap().to_string()),
            );
            v
        } else {
            let j: serde_json::Value = serde_json::from_str(&text).unwrap();
            let s = if file.ends_with(".claude.json") && name == "linear" {
                &j["projects"]["/work/x"]["mcpServers"][name]
            } else if file.ends_with("opencode.json") {
                &j["mcp"][name]
            } else if file.ends_with("vscode/mcp.json") {
                &j["servers"][name]
            } else {
                &j["mcpServers"][name]
            };
            if file.ends_with("opencode.json") {
                strings(&s["command"])
            } else {
                let mut v = vec![s["command"].as_str().unwrap().to_string()];
                v.extend(strings(&s["args"]));
                v
            }
        };
        out.push((key.to_string(), argv));
    }
    out
}

#[test]
fn migrate_refuses_a_symlinked_config_and_a_conflicting_name() {
    let t = Tree::session().dir("proj/.git");
    t.write(
        "elsewhere/mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN_A": "zqAbCd1234EfGh5678"}}}}"#,
    );
    std::os::unix::fs::symlink(t.path("elsewhere/mcp.json"), t.path("proj/.mcp.json")).unwrap();
    let before = t.read("elsewhere/mcp.json");
    t.agentenv(["mcp", "migrate"])
        .status(1)
        .stderr_has("$W/proj/.mcp.json is a symbolic link")
        .secret("zqAbCd1234EfGh5678")
        .run();
    assert_eq!(t.read("elsewhere/mcp.json"), before);
    assert!(!t.path("home/.agents/env").exists());
    fs::remove_file(t.path("proj/.mcp.json")).unwrap();

    // The store already holds another value under the name: left as is.
    t.write("home/.agents/env", "TOKEN_A=zqOtherValue-00000\n");
    t.write("proj/.mcp.json", &before);
    t.agentenv(["mcp", "migrate"])
        .status(1)
        .stdout_has("left $W/proj/.mcp.json: server a: env TOKEN_A (a literal under a secret's name): the store already sets this name to another value")
        .secret("zqAbCd1234EfGh5678")
        .secret("zqOtherValue-00000")
        .run();
    assert_eq!(t.read("proj/.mcp.json"), before);
    assert_eq!(t.read("home/.agents/env"), "TOKEN_A=zqOtherValue-00000\n");
}

#[test]
fn migrate_project_writes_the_project_store() {
    let t = Tree::session().dir("proj/.agents");
    t.write(
        "proj/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN_A": "zqAbCd1234EfGh5678"}}}}"#,
    );
    t.agentenv(["mcp", "migrate", "--project", "."])
        .stdout_has("moved $W/proj/.mcp.json: server a: env TOKEN_A -> $W/proj/.agents/local.env")
        .secret("zqAbCd1234EfGh5678")
        .run();
    assert_eq!(
        t.read("proj/.agents/local.env"),
        "TOKEN_A='zqAbCd1234EfGh5678'\n"
    );
    assert!(!t.path("home/.agents/env").exists());
}

#[test]
fn exec_only_gives_the_named_sensitive_variables_and_every_public_one() {
    let t = Tree::session()
        .file(
            "home/.agents/env",
            "A_TOKEN=zqAaaaaaaa1\nB_TOKEN=zqBbbbbbbb2\nC_TOKEN=zqCcccccccc3\nLOG_LEVEL=debug\nPIN=1234\n",
        )
        .file(
            "home/.agents/agentenv.toml",
            "[vars]\nLOG_LEVEL = { public = true }\n",
        );
    let show =
        "echo A=${A_TOKEN:-} B=${B_TOKEN:-} C=${C_TOKEN:-} L=${LOG_LEVEL:-} OWN=${CALLER_OWN:-}";
    t.agentenv(["exec", "--only", "A_TOKEN", "--", "sh", "-c", show])
        .env("CALLER_OWN", "mine")
        .stdout("A=zqAaaaaaaa1 B= C= L=debug OWN=mine\n")
        .run();
    // A sensitive value too short to mask (not masked, still sensitive)
    // stays out unless named.
    t.agentenv([
        "exec",
        "--only",
        "A_TOKEN",
        "--",
        "sh",
        "-c",
        "echo P=${PIN:-}",
    ])
    .stdout("P=\n")
    .run();
    t.agentenv(["exec", "--only", "PIN", "--", "sh", "-c", "echo P=${PIN:-}"])
        .stdout("P=1234\n")
        .run();
    // A comma list and the flag repeated.
    t.agentenv([
        "exec",
        "--only",
        "A_TOKEN,C_TOKEN",
        "--only",
        "B_TOKEN",
        "--",
        "sh",
        "-c",
        show,
    ])
    .stdout("A=zqAaaaaaaa1 B=zqBbbbbbbb2 C=zqCcccccccc3 L=debug OWN=\n")
    .run();
    // A name no layer sets: warned about (the name only), the rest removed.
    t.agentenv(["exec", "--only", "NOPE", "--redact", "--", "sh", "-c", show])
        .stdout("A= B= C= L=debug OWN=\n")
        .stderr_has("exec --only NOPE: no layer sets it")
        .run();
    // Masking still covers every sensitive value.
    t.agentenv([
        "exec",
        "--only",
        "A_TOKEN",
        "--redact",
        "--",
        "sh",
        "-c",
        "echo $A_TOKEN zqBbbbbbbb2",
    ])
    .stdout("[REDACTED:A_TOKEN] [REDACTED:B_TOKEN]\n")
    .run();
}

#[test]
fn launch_only_keeps_the_named_operator_values() {
    let t = Tree::new().file("plug/.env", "A_TOKEN=zqAaaaaaaa1\nB_TOKEN=zqBbbbbbbb2\n");
    t.host([
        "launch",
        "--plugin-root",
        &t.arg("plug"),
        "--only",
        "B_TOKEN",
        "--",
        "sh",
        "-c",
        "echo A=${A_TOKEN:-} B=${B_TOKEN:-}",
    ])
    .env("AGENT_BUNDLE_PLUGIN_ROOT", t.arg("plug"))
    .stdout("A= B=zqBbbbbbbb2\n")
    .run();
}

#[test]
fn audit_missing_path_is_an_error_and_mcp_configs_are_default_places() {
    let t = Tree::session()
        .dir("proj/.git")
        .file("home/.agents/env", format!("MY_STORED={STORED}\n"));
    t.agentenv(["audit", "nope.txt"])
        .status(2)
        .stderr_has("audit: nope.txt does not exist; nothing searched")
        .run();
    t.write(
        "proj/.mcp.json",
        format!("{{\"mcpServers\": {{\"a\": {{\"command\": \"x\", \"env\": {{\"K\": \"{STORED}\"}}}}}}}}\n"),
    );
    t.agentenv(["audit"])
        .status(1)
        .stdout_has("$W/proj/.mcp.json:1: MY_STORED (raw)")
        .secret(STORED)
        .run();
}

#[test]
fn audit_staged_reads_the_index_and_repo_the_tracked_files() {
    let Some(git) = support::tool("git") else {
        return;
    };
    let t = Tree::session().file("home/.agents/env", format!("MY_STORED={STORED}\n"));
    let g = |args: &[&str]| {
        let ok = Command::new(&git)
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(t.path("proj"))
            .env("HOME", t.path("home"))
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    g(&["init", "-q", "."]);
    t.write("proj/old.txt", format!("committed {STORED}\n"));
    g(&["add", "old.txt"]);
    g(&["commit", "-q", "-m", "one"]);
    // Nothing staged: clean (the committed leak is HEAD's, not staged).
    t.agentenv(["audit", "--staged"])
        .stdout_has("audit: 0 occurrences")
        .run();
    // Staged with the value, then the working copy cleaned: the index
    // version is what counts.
    t.write("proj/new.txt", format!("a\nb {STORED}\n"));
    g(&["add", "new.txt"]);
    t.write("proj/new.txt", "clean now\n");
    t.write("proj/untracked.txt", format!("{STORED}\n"));
    t.agentenv(["audit", "--staged"])
        .status(1)
        .stdout_has("$W/proj/new.txt:2: MY_STORED (raw)")
        .stdout_lacks("old.txt")
        .stdout_lacks("untracked.txt")
        .secret(STORED)
        .run();
    // --repo: every tracked file's working copy (old.txt), not untracked.
    t.agentenv(["audit", "--repo"])
        .status(1)
        .stdout_has("$W/proj/old.txt:1: MY_STORED (raw)")
        .stdout_lacks("new.txt:")
        .stdout_lacks("untracked.txt")
        .run();
    t.agentenv(["audit", "--staged", "--fix"]).status(2).run();
}

#[test]
fn migrate_agents_dir_writes_that_user_store() {
    let t = Tree::session().dir("proj/.git");
    t.write(
        "proj/.mcp.json",
        r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN_A": "zqAbCd1234EfGh5678"}}}}"#,
    );
    t.agentenv(["mcp", "migrate", "--agents-dir", "../store2"])
        .stdout_has("moved $W/proj/.mcp.json: server a: env TOKEN_A -> $W/proj/../store2/env")
        .stdout_has("backup $W/proj/.mcp.json: $W/proj/../store2/.backup/mcp/")
        .secret("zqAbCd1234EfGh5678")
        .run();
    assert_eq!(t.read("store2/env"), "TOKEN_A='zqAbCd1234EfGh5678'\n");
    assert!(!t.path("home/.agents").exists());
}
