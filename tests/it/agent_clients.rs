//! Gemini CLI, OpenCode and Copilot CLI through the binary (docs/agents.md):
//! each client's hook JSON as its documentation shows it (Gemini's
//! BeforeTool and AfterTool, agentenv's OpenCode plugin — run in node —,
//! Copilot's camelCase preToolUse) gets that client's answer; a rewritten
//! command, run as the client runs it, has the variables and masks them;
//! `init gemini|opencode|copilot` is idempotent and `--remove` restores
//! the bytes.

use crate::support;

use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const TOKEN: &str = "zqCANARY_tok_7c1e5d0b3a";
const PASSWORD: &str = "zqCANARY pw/2b9+f&\"q\"";

/// A scratch HOME with a user store (two secrets, one public variable)
/// and a project; commands go through the per-command helper (no daemon
/// outlives the test).
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".agents")).unwrap();
        std::fs::create_dir_all(dir.path().join("proj")).unwrap();
        std::fs::write(
            home.join(".agents/env"),
            format!("GH_TOKEN={TOKEN}\nDB_PASSWORD='{PASSWORD}'\nLOG_LEVEL=debug\n"),
        )
        .unwrap();
        std::fs::write(
            home.join(".agents/agentenv.toml"),
            "[vars]\nLOG_LEVEL = { public = true }\n",
        )
        .unwrap();
        World { dir }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }
    fn env<'c>(&self, c: &'c mut Command) -> &'c mut Command {
        c.env_clear()
            .env("HOME", self.home())
            .env("PATH", "/usr/bin:/bin")
            .env("TMPDIR", self.dir.path())
            .env("AGENTENV_NO_DAEMON", "1")
            .current_dir(self.proj())
    }
    /// `agentenv ARGS` with `stdin`.
    fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        let mut c = Command::new(support::agentenv_bin());
        self.env(&mut c)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        feed(&mut c, stdin)
    }
    /// The hook's JSON answer to `event` (`None`: it said nothing).
    fn answer(&self, client: &str, event_name: &str, event: &Value) -> Option<Value> {
        let out = self.run(&["hook", client, event_name], event.to_string().as_bytes());
        assert!(out.status.success(), "{}", s(&out.stderr));
        assert!(!s(&out.stdout).contains("zqCANARY"), "{}", s(&out.stdout));
        assert!(!s(&out.stderr).contains("zqCANARY"), "{}", s(&out.stderr));
        if out.stdout.is_empty() {
            return None;
        }
        Some(serde_json::from_slice(&out.stdout).unwrap())
    }
    /// `script` run by bash as a client runs it: (stdout, stderr, status).
    fn bash(&self, script: &str, extra_env: &[(String, String)]) -> (String, String, i32) {
        let mut c = Command::new("bash");
        self.env(&mut c)
            .envs(extra_env.iter().cloned())
            .args(["-c", script])
            .stdin(Stdio::null());
        let out = c.output().unwrap();
        (
            s(&out.stdout),
            s(&out.stderr),
            out.status.code().unwrap_or(-1),
        )
    }
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn feed(c: &mut Command, stdin: &[u8]) -> Output {
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn sha256(v: &str) -> String {
    let o = Command::new("sh")
        .args(["-c", &format!("printf %s '{v}' | sha256sum")])
        .output()
        .unwrap();
    s(&o.stdout)
}

/// The command the client runs: its output masked, the variables set.
const PROBE: &str = "printf '%s\\n' \"$GH_TOKEN\" \"$LOG_LEVEL\"; printf %s \"$DB_PASSWORD\" >&2; printf %s \"$GH_TOKEN\" | sha256sum; exit 3";

fn check_probe(out: &str, err: &str, status: i32) {
    assert_eq!(status, 3, "{out} {err}");
    assert!(
        out.starts_with("[REDACTED:GH_TOKEN]\ndebug\n"),
        "{out} / {err}"
    );
    assert!(out.ends_with(&sha256(TOKEN)), "the value was right: {out}");
    assert_eq!(err, "[REDACTED:DB_PASSWORD]");
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn gemini_before_tool_rewrites_the_shell_command() {
    if support::tool("bash").is_none() {
        return;
    }
    let w = World::new();
    let ev = json!({
        "session_id": "s", "hook_event_name": "BeforeTool", "cwd": w.proj(),
        "timestamp": "2026-01-01T00:00:00Z", "transcript_path": "/dev/null",
        "tool_name": "run_shell_command",
        "tool_input": {"command": PROBE, "description": "d", "dir_path": "."}
    });
    let a = w.answer("gemini", "pre-tool-use", &ev).expect("a rewrite");
    let hs = &a["hookSpecificOutput"];
    assert_eq!(hs["hookEventName"], "BeforeTool");
    assert_eq!(hs["tool_input"]["description"], "d", "other fields kept");
    assert_eq!(hs["tool_input"]["dir_path"], ".");
    let cmd = hs["tool_input"]["command"].as_str().unwrap();
    assert!(cmd.ends_with(&format!("\n{PROBE}")), "{cmd}");
    // As Gemini CLI 0.61 runs it: in a subshell that sets its own EXIT trap.
    let script = format!(
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/dev/null\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{cmd}\n)"
    );
    let (out, err, status) = w.bash(&script, &[]);
    check_probe(&out, &err, status);
}

#[test]
fn gemini_before_tool_denies_the_stores_to_the_file_tools() {
    let w = World::new();
    let store = w.home().join(".agents/env").display().to_string();
    for (tool, input) in [
        ("read_file", json!({"file_path": store})),
        (
            "read_many_files",
            json!({"include": ["src/*.rs", ".agents/env"]}),
        ),
        (
            "grep_search",
            json!({"pattern": "x", "dir_path": ".agents"}),
        ),
        ("glob", json!({"pattern": "**/.agents/*"})),
        (
            "list_directory",
            json!({"dir_path": w.home().join(".agents")}),
        ),
        (
            "write_file",
            json!({"file_path": ".agents/env", "content": "x"}),
        ),
    ] {
        let ev = json!({"hook_event_name": "BeforeTool", "cwd": w.proj(),
                        "tool_name": tool, "tool_input": input});
        let a = w
            .answer("gemini", "pre-tool-use", &ev)
            .unwrap_or_else(|| panic!("{tool}: no answer"));
        assert_eq!(a["decision"], "deny", "{tool}");
        assert!(a["reason"].as_str().unwrap().contains("agent store"), "{a}");
    }
    for (tool, input) in [
        ("read_file", json!({"file_path": "src/main.rs"})),
        ("read_many_files", json!({"include": ["src/*.rs"]})),
        (
            "web_fetch",
            json!({"prompt": "https://example.com/.agents/env"}),
        ),
    ] {
        let ev = json!({"hook_event_name": "BeforeTool", "cwd": w.proj(),
                        "tool_name": tool, "tool_input": input});
        assert_eq!(w.answer("gemini", "pre-tool-use", &ev), None, "{tool}");
    }
}

#[test]
fn gemini_after_tool_masks_every_tool_result_holding_a_secret() {
    let w = World::new();
    let b64 = {
        let o = Command::new("sh")
            .args(["-c", &format!("printf %s '{TOKEN}' | base64")])
            .output()
            .unwrap();
        s(&o.stdout).trim().to_string()
    };
    for (tool, content) in [
        (
            "read_file",
            json!(format!("GH_TOKEN={TOKEN}\nLOG_LEVEL=debug\n")),
        ),
        (
            "read_many_files",
            json!([{"text": "--- a ---\n"}, {"text": format!("k: {b64}\n")}]),
        ),
        (
            "web_fetch",
            json!({"text": format!("{{\"pw\": {}}}", serde_json::to_string(PASSWORD).unwrap())}),
        ),
        (
            "run_shell_command",
            json!(format!("Output: {TOKEN}\nExit Code: 0")),
        ),
    ] {
        let ev = json!({
            "hook_event_name": "AfterTool", "cwd": w.proj(), "tool_name": tool,
            "tool_input": {}, "tool_response": {"llmContent": content, "returnDisplay": "x"}
        });
        let a = w
            .answer("gemini", "after-tool", &ev)
            .unwrap_or_else(|| panic!("{tool}: not masked"));
        assert_eq!(a["decision"], "deny", "{tool}");
        let reason = a["reason"].as_str().unwrap();
        assert!(reason.contains("[REDACTED:"), "{tool}: {reason}");
        assert!(
            !reason.contains(TOKEN) && !reason.contains(&b64),
            "{reason}"
        );
    }
    // The rest of a masked result stays; a clean result is left alone.
    let ev = json!({"hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {},
                    "tool_response": {"llmContent": format!("a\nGH_TOKEN={TOKEN}\nb")}});
    let a = w.answer("gemini", "after-tool", &ev).unwrap();
    assert!(a["reason"]
        .as_str()
        .unwrap()
        .ends_with("a\nGH_TOKEN=[REDACTED:GH_TOKEN]\nb"));
    let ev = json!({"hook_event_name": "AfterTool", "tool_name": "read_file", "tool_input": {},
                    "tool_response": {"llmContent": "LOG_LEVEL=debug\n"}});
    assert_eq!(w.answer("gemini", "after-tool", &ev), None);
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn copilot_pre_tool_use_answers_with_modified_args() {
    if support::tool("bash").is_none() {
        return;
    }
    let w = World::new();
    // camelCase (`preToolUse`): toolArgs as an object or a JSON text.
    for args in [
        json!({"command": PROBE, "description": "d"}),
        json!(json!({"command": PROBE, "description": "d"}).to_string()),
    ] {
        let ev = json!({"sessionId": "s", "timestamp": 1704614400000u64, "cwd": w.proj(),
                        "toolName": "bash", "toolArgs": args});
        let a = w.answer("copilot", "pre-tool-use", &ev).expect("a rewrite");
        assert_eq!(a["modifiedArgs"]["description"], "d");
        let cmd = a["modifiedArgs"]["command"].as_str().unwrap();
        let (out, err, status) = w.bash(cmd, &[]);
        check_probe(&out, &err, status);
    }
    let store = w.home().join(".agents/env").display().to_string();
    for (tool, args) in [
        ("view", json!({"path": store})),
        ("grep", json!({"pattern": "x", "path": ".agents"})),
        ("edit", json!({"path": "sub/../.agents/env"})),
    ] {
        let ev = json!({"cwd": w.proj(), "toolName": tool, "toolArgs": args});
        let a = w.answer("copilot", "pre-tool-use", &ev).unwrap();
        assert_eq!(a["permissionDecision"], "deny", "{tool}");
        assert!(a["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("agent store"));
    }
    let ev = json!({"cwd": w.proj(), "toolName": "view", "toolArgs": {"path": "README.md"}});
    assert_eq!(w.answer("copilot", "pre-tool-use", &ev), None);
}

#[test]
fn opencode_hook_answers_and_shell_env_holds_public_values_only() {
    let w = World::new();
    let ev = json!({"tool_name": "bash", "cwd": w.proj(),
                    "tool_input": {"command": "echo hi", "description": "d", "timeout": 5}});
    let a = w.answer("opencode", "pre-tool-use", &ev).unwrap();
    assert_eq!(a["args"]["description"], "d");
    assert_eq!(a["args"]["timeout"], 5);
    assert!(a["args"]["command"]
        .as_str()
        .unwrap()
        .ends_with("\necho hi"));
    for (tool, args) in [
        ("read", json!({"filePath": w.home().join(".agents/env")})),
        ("grep", json!({"pattern": "x", "path": ".agents"})),
        ("glob", json!({"pattern": ".agents/**"})),
        ("list", json!({"path": w.home().join(".agents")})),
    ] {
        let ev = json!({"tool_name": tool, "cwd": w.proj(), "tool_input": args});
        let a = w.answer("opencode", "pre-tool-use", &ev).unwrap();
        assert!(
            a["deny"].as_str().unwrap().contains("agent store"),
            "{tool}"
        );
    }
    let out = w.run(&["hook", "opencode", "shell-env"], b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    let env: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["LOG_LEVEL"], "debug");
    assert!(env.get("GH_TOKEN").is_none() && env.get("DB_PASSWORD").is_none());
    assert!(!s(&out.stdout).contains("zqCANARY"));
}

/// The plugin `init opencode` writes, loaded by node as OpenCode loads it
/// (an ES module; `shell.env` then `tool.execute.before`), and the shell
/// command run with the environment it gave: the variables are there,
/// the output masked; no process's command line held a value.
#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn the_opencode_plugin_runs_a_command_with_its_variables() {
    if support::tool("node").is_none() || support::tool("bash").is_none() {
        return;
    }
    let w = World::new();
    let out = w.run(&["init", "opencode", "--user"], b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    let plugin = w.home().join(".config/opencode/plugins/agentenv.js");
    assert!(plugin.is_file());
    // The plugin names this binary; the test's copy is `agentenv` too.
    let driver = w.dir.path().join("driver.mjs");
    std::fs::write(
        &driver,
        format!(
            r#"import {{ AgentenvPlugin }} from {plugin};
const hooks = await AgentenvPlugin({{ directory: process.cwd() }});
const env = {{ env: {{}} }};
await hooks["shell.env"]({{ cwd: process.cwd(), sessionID: "s", callID: "c" }}, env);
const out = {{ args: {{ command: process.argv[2], description: "d" }} }};
await hooks["tool.execute.before"]({{ tool: "bash", sessionID: "s", callID: "c" }}, out);
let denied = "";
try {{
  await hooks["tool.execute.before"]({{ tool: "read", sessionID: "s", callID: "c" }},
    {{ args: {{ filePath: ".agents/env" }} }});
}} catch (e) {{ denied = String(e.message); }}
process.stdout.write(JSON.stringify({{ env: env.env, args: out.args, denied }}));
"#,
            plugin = serde_json::to_string(&plugin.display().to_string()).unwrap()
        ),
    )
    .unwrap();
    let mut c = Command::new("node");
    let got = w.env(&mut c).arg(&driver).arg(PROBE).output().unwrap();
    assert!(got.status.success(), "{}", s(&got.stderr));
    let v: Value = serde_json::from_slice(&got.stdout).unwrap();
    assert!(!s(&got.stdout).contains("zqCANARY"));
    assert_eq!(v["env"]["LOG_LEVEL"], "debug");
    assert!(v["denied"].as_str().unwrap().contains("agent store"));
    assert_eq!(v["args"]["description"], "d");
    let cmd = v["args"]["command"].as_str().unwrap();
    let env: Vec<(String, String)> = v["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    // OpenCode runs `bash -c CMD` with the environment shell.env gave.
    let (out, err, status) = w.bash(cmd, &env);
    check_probe(&out, &err, status);
}

/// `init CLIENT` twice, then `--remove`: the second run changes nothing,
/// the removal gives back the file's bytes.
#[test]
fn init_gemini_keeps_the_users_settings_and_remove_restores_the_bytes() {
    let w = World::new();
    let settings = w.proj().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let user = "{\n    \"theme\": \"Default\",   \"big\": 123456789012345678901234567890,\n    \"hooks\": {\n        \"BeforeTool\": [\n            {\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"./mine.sh\"}]}\n        ]\n    },\n    \"zeta\": [1, 2]\n}\n";
    std::fs::write(&settings, user).unwrap();
    let init = |extra: &[&str]| {
        let mut args = vec!["init", "gemini", "--project", "."];
        args.extend_from_slice(extra);
        let out = w.run(&args, b"");
        assert!(out.status.success(), "{}", s(&out.stderr));
        (s(&out.stdout), s(&out.stderr))
    };
    let (dry, _) = init(&["--dry-run"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), user, "dry run");
    init(&[]);
    let added = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(dry, added, "the dry run showed the file");
    let v: Value = serde_json::from_str(&added).unwrap();
    assert_eq!(v["theme"], "Default");
    assert!(added.contains("123456789012345678901234567890"));
    let before = v["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(
        before[0]["hooks"][0]["command"], "./mine.sh",
        "the user's hook kept"
    );
    assert_eq!(
        before[1]["hooks"][0]["command"],
        "agentenv hook gemini pre-tool-use"
    );
    assert!(before[1]["matcher"]
        .as_str()
        .unwrap()
        .contains("run_shell_command"));
    let after = &v["hooks"]["AfterTool"][0];
    assert_eq!(after["matcher"], "*");
    assert_eq!(
        after["hooks"][0]["command"],
        "agentenv hook gemini after-tool"
    );
    let (_, err) = init(&[]);
    assert!(err.contains("already"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), added);
    init(&["--remove"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), user);
    // --export-values has no meaning here.
    let out = w.run(&["init", "gemini", "--export-values"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", s(&out.stderr));
}

#[test]
fn init_opencode_and_copilot_write_a_file_of_their_own() {
    let w = World::new();
    for (client, var, dir, file) in [
        (
            "opencode",
            "XDG_CONFIG_HOME",
            "cfg",
            "cfg/opencode/plugins/agentenv.js",
        ),
        ("copilot", "COPILOT_HOME", "cop", "cop/hooks/agentenv.json"),
    ] {
        let path = w.dir.path().join(file);
        let run = |extra: &[&str]| {
            let mut c = Command::new(support::agentenv_bin());
            let mut args = vec!["init", client];
            args.extend_from_slice(extra);
            let out = w
                .env(&mut c)
                .env(var, w.dir.path().join(dir))
                .args(&args)
                .output()
                .unwrap();
            (out.status.code(), s(&out.stderr))
        };
        assert_eq!(run(&[]).0, Some(0));
        let text = std::fs::read_to_string(&path).unwrap();
        let me = support::agentenv_bin().display().to_string();
        assert!(text.contains(&me) || text.contains("agentenv"), "{text}");
        let (code, err) = run(&[]);
        assert_eq!(code, Some(0));
        assert!(err.contains("already"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert_eq!(run(&["--remove"]).0, Some(0));
        assert!(!path.exists());
        assert!(path.parent().unwrap().is_dir(), "only the file goes");
        // A file of that name agentenv did not write is never touched.
        std::fs::write(&path, "mine\n").unwrap();
        for extra in [&[][..], &["--remove"]] {
            let (code, err) = run(extra);
            assert_eq!(code, Some(1), "{err}");
            assert!(err.contains("not agentenv's"), "{err}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "mine\n");
        }
        std::fs::remove_file(&path).unwrap();
    }
    // The Copilot file is what its hooks reference documents.
    let out = w.run(&["init", "copilot", "--project", ".", "--dry-run"], b"");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(
        v["hooks"]["preToolUse"][0]["bash"],
        "agentenv hook copilot pre-tool-use"
    );
    assert!(!w.proj().join(".github").exists(), "dry run");
}

#[test]
fn unknown_events_are_named_per_client() {
    let w = World::new();
    let out = w.run(&["hook", "copilot", "session-start"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s(&out.stderr).contains("known: pre-tool-use"),
        "{}",
        s(&out.stderr)
    );
}

#[test]
fn status_names_the_client_wiring_it_finds() {
    let w = World::new();
    std::fs::create_dir_all(w.proj().join(".agents")).unwrap();
    for args in [
        &["init", "gemini", "--project", "."][..],
        &["init", "copilot", "--user"],
        &["allow", "."],
    ] {
        let out = w.run(args, b"");
        assert!(out.status.success(), "{args:?}: {}", s(&out.stderr));
    }
    let out = w.run(&["status", "--format", "json"], b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, String, Value)> = v["agent_wiring"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["client"].as_str().unwrap().to_string(),
                x["scope"].as_str().unwrap().to_string(),
                x["events"].clone(),
            )
        })
        .collect();
    assert!(
        found.contains(&(
            "gemini".into(),
            "project".into(),
            json!(["BeforeTool", "AfterTool"])
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&("copilot".into(), "user".into(), json!(["preToolUse"]))),
        "{found:?}"
    );
    let out = w.run(&["status"], b"");
    assert!(
        s(&out.stdout).contains("agent wiring (init CLIENT):\n  gemini"),
        "{}",
        s(&out.stdout)
    );
    // Taken out: nothing found.
    w.run(&["init", "gemini", "--project", ".", "--remove"], b"");
    w.run(&["init", "copilot", "--remove"], b"");
    let out = w.run(&["status", "--format", "json"], b"");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["agent_wiring"], json!([]));
}

#[test]
fn explain_names_the_client_wiring_it_finds() {
    let w = World::new();
    std::fs::create_dir_all(w.proj().join(".agents")).unwrap();
    for args in [
        &["init", "gemini", "--project", "."][..],
        &["init", "copilot", "--user"],
        &["allow", "."],
    ] {
        let out = w.run(args, b"");
        assert!(out.status.success(), "{args:?}: {}", s(&out.stderr));
    }
    let out = w.run(&["explain", "--format", "json"], b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, String)> = v["agent_wiring"]
        .as_array()
        .unwrap_or_else(|| panic!("no agent_wiring: {v}"))
        .iter()
        .map(|x| {
            (
                x["client"].as_str().unwrap().to_string(),
                x["scope"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        found.contains(&("gemini".into(), "project".into())),
        "{found:?}"
    );
    assert!(
        found.contains(&("copilot".into(), "user".into())),
        "{found:?}"
    );
    let out = w.run(&["explain"], b"");
    assert!(out.status.success(), "{}", s(&out.stderr));
    let text = s(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("agent wiring: "))
        .unwrap_or_else(|| panic!("no wiring line: {text}"));
    assert!(line.contains("gemini (project: "), "{line}");
    assert!(line.contains("copilot (user: "), "{line}");
    assert!(line.contains(".gemini/settings.json"), "{line}");
    // Taken out: nothing named, an empty array in JSON.
    w.run(&["init", "gemini", "--project", ".", "--remove"], b"");
    w.run(&["init", "copilot", "--remove"], b"");
    let out = w.run(&["explain"], b"");
    assert!(
        !s(&out.stdout).contains("agent wiring"),
        "{}",
        s(&out.stdout)
    );
    let out = w.run(&["explain", "--format", "json"], b"");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["agent_wiring"], json!([]));
}
