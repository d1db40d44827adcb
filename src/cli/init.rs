//! `agentenv init claude [--user | --project DIR] [--dry-run] [--remove]`
//! (SPEC §12): add (or take out) the Claude Code SessionStart hook that
//! loads the session env into `$CLAUDE_ENV_FILE`.
//!
//! The settings file is edited as a JSON tree whose objects keep their key
//! order (serde_json's `preserve_order`), so every other key, hook and
//! entry stays where it was; it is written back with 2-space indentation,
//! atomically (temp file + rename, through a symlink to its target), keeping
//! an existing file's mode (a new one is 0600: Claude settings can hold an
//! `env` map). A file that is not valid JSON is left untouched and named
//! with the line and column of the error, never its text.
//!
//! **How the hook names agentenv.** In the user settings (`--user`, the
//! default) the command starts with agentenv's absolute path: Claude Code
//! runs hooks with the environment it was started with, and when it is
//! started from a desktop launcher or an IDE that `PATH` often lacks the
//! directory agentenv was installed into (`~/.cargo/bin`, `~/.local/bin`),
//! so a bare name would fail with "command not found" and the session would
//! silently start without its environment. The path is the `PATH` entry that
//! is the running binary when there is one (a package manager's stable
//! symlink rather than a versioned directory behind it), else the running
//! binary itself; running `init claude` again after moving agentenv updates
//! the entry in place. In a project's settings (`--project DIR`), which are
//! committed and shared, the command uses the bare name `agentenv`: an
//! absolute path from one machine would be wrong on every other.
//!
//! An entry is agentenv's when a command hook runs a program whose file name
//! is `agentenv` as `agentenv env … --into "$CLAUDE_ENV_FILE" …` (a simple
//! command, any flags: the hand-written hook of earlier READMEs counts);
//! that is what `--remove` takes out. "Already present" means that entry's
//! command is exactly the one `init` would write; any other agentenv entry
//! is rewritten to it in place.

use super::{say, Exit, Failure};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Subcommand)]
pub enum InitCommand {
    /// Add the SessionStart hook for Claude Code to its settings.json.
    #[command(after_help = super::examples::INIT_CLAUDE)]
    Claude(ClaudeArgs),
}

#[derive(Debug, clap::Args)]
pub struct ClaudeArgs {
    /// Edit the user settings: $CLAUDE_CONFIG_DIR/settings.json, else
    /// ~/.claude/settings.json (the default).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Edit DIR/.claude/settings.json (shared with the project; the hook
    /// names `agentenv` by bare name there).
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print the resulting file on stdout; write nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// Take out agentenv's entry (only that).
    #[arg(long = "remove")]
    pub remove: bool,
}

/// The hook command after the program.
pub const HOOK_ARGS: &str = " env --diff --cache --into \"$CLAUDE_ENV_FILE\" -q";

/// Largest settings file read.
const MAX_SETTINGS: u64 = 16 << 20;

pub fn run(c: InitCommand) -> Exit {
    match c {
        InitCommand::Claude(a) => run_claude(a),
    }
}

/// What an edit did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Added,
    Updated,
    AlreadyPresent,
    Removed,
    NotPresent,
}

/// Shell-quote `s` for the hook command (`sh -c`): bare when it only holds
/// characters no shell treats specially, else in single quotes.
pub fn sh_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./-+:@%,=".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The program part of `command` when it is agentenv's hook: a program
/// whose file name is `agentenv` (bare, a path, or a single-quoted path),
/// then ` env …` writing `--into "$CLAUDE_ENV_FILE"` (any flag order, so
/// the hand-written hook of earlier READMEs counts too), and nothing that
/// would make it a compound command.
fn hook_program(command: &str) -> Option<String> {
    let (prog, rest) = if let Some(q) = command.strip_prefix('\'') {
        // '…' with '\'' for each quote inside, up to the first space.
        let end = q
            .find("' ")
            .or_else(|| q.strip_suffix('\'').map(|p| p.len()))?;
        let quoted = &q[..end];
        (quoted.replace("'\\''", "'"), &q[end + 1..])
    } else {
        let end = command.find(' ')?;
        (command[..end].to_string(), &command[end..])
    };
    if prog.is_empty() || (!command.starts_with('\'') && prog.contains(['\'', '"', '\t'])) {
        return None;
    }
    let name = prog.rsplit('/').next().unwrap_or(&prog);
    if name != "agentenv" {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    if words.first() != Some(&"env") {
        return None;
    }
    let into = words
        .windows(2)
        .any(|w| w[0] == "--into" && w[1] == "\"$CLAUDE_ENV_FILE\"");
    let plain = !rest.contains([';', '&', '|', '`', '(', ')', '<', '>', '\n', '\\']);
    (into && plain).then_some(prog)
}

fn is_ours(hook: &Value) -> bool {
    hook.get("type").and_then(Value::as_str) == Some("command")
        && hook
            .get("command")
            .and_then(Value::as_str)
            .and_then(hook_program)
            .is_some()
}

/// Where in the tree a shape error is.
fn shape_error(what: &str, want: &str) -> String {
    format!("\"{what}\" is not {want}")
}

/// Add agentenv's hook with `command` to `root` (pure). `Err` names the
/// key whose shape is wrong.
pub fn add_hook(root: &mut Value, command: &str) -> Result<Outcome, String> {
    let Value::Object(top) = root else {
        return Err("the top level is not a JSON object".into());
    };
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(shape_error("hooks", "an object"));
    };
    let start = hooks
        .entry("SessionStart")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(groups) = start else {
        return Err(shape_error("hooks.SessionStart", "an array"));
    };
    // Already there (any agentenv path): same command, or update it.
    for group in groups.iter_mut() {
        let Some(Value::Array(list)) = group.get_mut("hooks") else {
            continue;
        };
        for hook in list.iter_mut() {
            if is_ours(hook) {
                if hook.get("command").and_then(Value::as_str) == Some(command) {
                    return Ok(Outcome::AlreadyPresent);
                }
                hook["command"] = Value::String(command.to_string());
                return Ok(Outcome::Updated);
            }
        }
    }
    let mut entry = Map::new();
    entry.insert("type".into(), Value::String("command".into()));
    entry.insert("command".into(), Value::String(command.to_string()));
    let mut group = Map::new();
    group.insert("hooks".into(), Value::Array(vec![Value::Object(entry)]));
    groups.push(Value::Object(group));
    Ok(Outcome::Added)
}

/// Take agentenv's hook out of `root` (pure): only its hook objects, plus a
/// group, `SessionStart` or `hooks` that held nothing else.
pub fn remove_hook(root: &mut Value) -> Result<Outcome, String> {
    let Value::Object(top) = root else {
        return Err("the top level is not a JSON object".into());
    };
    let Some(hooks) = top.get_mut("hooks") else {
        return Ok(Outcome::NotPresent);
    };
    let Value::Object(hooks) = hooks else {
        return Err(shape_error("hooks", "an object"));
    };
    let Some(start) = hooks.get_mut("SessionStart") else {
        return Ok(Outcome::NotPresent);
    };
    let Value::Array(groups) = start else {
        return Err(shape_error("hooks.SessionStart", "an array"));
    };
    let mut removed = false;
    groups.retain_mut(|group| {
        let Some(Value::Array(list)) = group.get_mut("hooks") else {
            return true;
        };
        let before = list.len();
        list.retain(|h| !is_ours(h));
        if list.len() == before {
            return true;
        }
        removed = true;
        !list.is_empty()
    });
    if !removed {
        return Ok(Outcome::NotPresent);
    }
    if groups.is_empty() {
        hooks.shift_remove("SessionStart");
        if hooks.is_empty() {
            top.shift_remove("hooks");
        }
    }
    Ok(Outcome::Removed)
}

/// Line and column (1-based) of byte `at` in `bytes`.
fn line_col(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, at - start + 1)
}

/// Parse a settings file: `Err` is a message naming the line and column of
/// the first error, never the text.
pub fn parse_settings(bytes: &[u8]) -> Result<Value, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    // serde_json reads UTF-8 text only inside strings; report a bad byte
    // anywhere at its own position.
    if let Err(e) = std::str::from_utf8(bytes) {
        let (l, c) = line_col(bytes, e.valid_up_to());
        return Err(format!("not valid JSON: not UTF-8 at line {l}, column {c}"));
    }
    serde_json::from_slice::<Value>(bytes).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Eof => "unexpected end",
            _ => "syntax error",
        };
        format!(
            "not valid JSON: {what} at line {}, column {}",
            e.line(),
            e.column()
        )
    })
}

/// The settings as 2-space JSON, with a final newline when `newline`.
pub fn format_settings(v: &Value, newline: bool) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("a Value serializes");
    if newline {
        s.push('\n');
    }
    s
}

/// The settings file `init claude` edits.
fn settings_path(a: &ClaudeArgs, env: &crate::core::Env) -> Result<PathBuf, String> {
    let cwd = crate::fsutil::current_dir()?;
    if let Some(dir) = &a.project {
        let dir = cwd.join(dir);
        if !dir.is_dir() {
            return Err(format!("--project {}: not a directory", dir.display()));
        }
        return Ok(dir.join(".claude").join("settings.json"));
    }
    if let Some(d) = crate::core::get(env, "CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(cwd.join(d).join("settings.json"));
    }
    match crate::core::get(env, "HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(Path::new(h).join(".claude").join("settings.json")),
        None => Err("HOME is not set; name the file's project with --project DIR".into()),
    }
}

/// The program the user-settings hook names: the `PATH` entry that is this
/// binary, else the binary's own path; `None` when it has no UTF-8 path.
fn own_program(env: &crate::core::Env) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let exe = std::env::current_exe().ok()?;
    let me = std::fs::metadata(&exe).ok()?;
    let on_path = crate::core::get(env, "PATH").and_then(|p| {
        std::env::split_paths(p)
            .filter(|d| d.is_absolute())
            .map(|d| d.join("agentenv"))
            .find(|c| {
                std::fs::metadata(c).is_ok_and(|m| m.dev() == me.dev() && m.ino() == me.ino())
            })
    });
    on_path.unwrap_or(exe).into_os_string().into_string().ok()
}

fn run_claude(a: ClaudeArgs) -> Exit {
    let env = crate::core::process_env();
    let path = settings_path(&a, &env).map_err(Failure::runtime)?;
    let shown = path.display();
    let (bytes, exists) = match crate::fsutil::read_input(&path, MAX_SETTINGS) {
        Ok(b) => (b, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), false),
        Err(e) => {
            return Err(Failure::runtime(format!(
                "{shown}: cannot read it ({})",
                crate::process::io_kind(&e)
            )));
        }
    };
    let unchanged =
        |msg: String| Failure::runtime(format!("{shown}: {msg}; the file was not changed"));
    // A UTF-8 byte order mark is kept; serde_json would refuse it.
    const BOM: &[u8] = b"\xef\xbb\xbf";
    let bom = bytes.starts_with(BOM);
    let mut root = parse_settings(bytes.strip_prefix(BOM).unwrap_or(&bytes)).map_err(unchanged)?;
    let outcome = if a.remove {
        remove_hook(&mut root)
    } else {
        let program = if a.project.is_some() {
            "agentenv".to_string()
        } else {
            match own_program(&env) {
                Some(p) => sh_quote(&p),
                None => {
                    crate::warn!(
                        "agentenv's own path is not UTF-8; the hook names it by bare name"
                    );
                    "agentenv".to_string()
                }
            }
        };
        add_hook(&mut root, &format!("{program}{HOOK_ARGS}"))
    };
    let outcome = outcome.map_err(unchanged)?;
    let changed = matches!(
        outcome,
        Outcome::Added | Outcome::Updated | Outcome::Removed
    );
    let newline = !exists || bytes.ends_with(b"\n");
    let text = if changed || !exists {
        let mut t = format_settings(&root, newline);
        // Keep the file's line ends (CRLF when it used them) and its BOM.
        if bytes.windows(2).any(|w| w == b"\r\n") {
            t = t.replace('\n', "\r\n");
        }
        if bom {
            t.insert(0, '\u{feff}');
        }
        t
    } else {
        String::from_utf8_lossy(&bytes).into_owned()
    };
    if a.dry_run {
        super::write_stdout(text.as_bytes())?;
    }
    match outcome {
        Outcome::AlreadyPresent => {
            say(format_args!(
                "the SessionStart hook is already in {shown}; nothing changed"
            ));
            return Ok(0);
        }
        Outcome::NotPresent => {
            say(format_args!(
                "no agentenv SessionStart hook in {shown}; nothing changed"
            ));
            return Ok(0);
        }
        _ => {}
    }
    if !a.dry_run {
        write_settings(&path, text.as_bytes(), exists).map_err(|e| {
            Failure::runtime(format!(
                "{shown}: cannot write it ({})",
                crate::process::io_kind(&e)
            ))
        })?;
    }
    let did = match (outcome, a.dry_run) {
        (Outcome::Added, false) => "added the SessionStart hook to",
        (Outcome::Added, true) => "dry run: would add the SessionStart hook to",
        (Outcome::Updated, false) => "updated agentenv's path in the SessionStart hook of",
        (Outcome::Updated, true) => {
            "dry run: would update agentenv's path in the SessionStart hook of"
        }
        (_, false) => "removed agentenv's SessionStart hook from",
        (_, true) => "dry run: would remove agentenv's SessionStart hook from",
    };
    say(format_args!("{did} {shown}"));
    Ok(0)
}

/// Write the settings atomically: an existing file keeps its mode; a new
/// one is 0600 in a directory created 0700.
fn write_settings(path: &Path, bytes: &[u8], exists: bool) -> std::io::Result<()> {
    use crate::fsutil::{write_atomic, Mode};
    if exists {
        return write_atomic(path, bytes, Mode::KeepOrUmask, false);
    }
    if let Some(dir) = path.parent() {
        if !dir.is_dir() {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
    }
    write_atomic(path, bytes, Mode::Exactly(0o600), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/opt/bin/agentenv env --diff --cache --into \"$CLAUDE_ENV_FILE\" -q";

    #[test]
    fn add_keeps_everything_else_in_order() {
        let text = r#"{
  "zeta": 1,
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "other"}]}]
  },
  "alpha": {"b": 2, "a": 1}
}"#;
        let mut v = parse_settings(text.as_bytes()).unwrap();
        assert_eq!(add_hook(&mut v, CMD), Ok(Outcome::Added));
        let out = format_settings(&v, true);
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zeta", "hooks", "alpha"]);
        assert!(out.contains("\"alpha\": {\n    \"b\": 2,\n    \"a\": 1\n  }"));
        let start = v["hooks"]["SessionStart"].as_array().unwrap();
        assert_eq!(start.len(), 2);
        assert_eq!(start[0]["hooks"][0]["command"], "other");
        assert_eq!(start[1]["hooks"][0]["command"], CMD);
        // Idempotent.
        assert_eq!(add_hook(&mut v, CMD), Ok(Outcome::AlreadyPresent));
        assert_eq!(format_settings(&v, true), out);
        // Another agentenv path: updated in place.
        let moved = CMD.replace("/opt/bin/agentenv", "agentenv");
        assert_eq!(add_hook(&mut v, &moved), Ok(Outcome::Updated));
        assert_eq!(v["hooks"]["SessionStart"][1]["hooks"][0]["command"], moved);
        // Remove takes out only ours, and the group it made.
        assert_eq!(remove_hook(&mut v), Ok(Outcome::Removed));
        assert_eq!(remove_hook(&mut v), Ok(Outcome::NotPresent));
        assert_eq!(
            v,
            parse_settings(text.as_bytes()).unwrap(),
            "back to the original"
        );
    }

    #[test]
    fn remove_cleans_up_only_what_held_nothing_else() {
        let mut v = Value::Object(Map::new());
        add_hook(&mut v, CMD).unwrap();
        remove_hook(&mut v).unwrap();
        assert_eq!(v, serde_json::json!({}));
        // Ours shares a group with another hook: only ours goes.
        let mut v = serde_json::json!({"hooks": {"SessionStart": [{"hooks": [
            {"type": "command", "command": "echo hi"},
            {"type": "command", "command": CMD}
        ]}]}});
        remove_hook(&mut v).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"hooks": {"SessionStart": [{"hooks": [
                {"type": "command", "command": "echo hi"}
            ]}]}})
        );
    }

    #[test]
    fn the_old_hand_written_hook_is_updated_not_duplicated() {
        let old = "agentenv env --diff --format export --cache --into \"$CLAUDE_ENV_FILE\"";
        let mut v = serde_json::json!({"hooks": {"SessionStart": [
            {"hooks": [{"type": "command", "command": old}]}
        ]}});
        assert_eq!(add_hook(&mut v, CMD), Ok(Outcome::Updated));
        assert_eq!(
            v,
            serde_json::json!({"hooks": {"SessionStart": [
                {"hooks": [{"type": "command", "command": CMD}]}
            ]}})
        );
    }

    #[test]
    fn which_commands_are_ours() {
        for c in [
            CMD.to_string(),
            format!("agentenv{HOOK_ARGS}"),
            format!("'/my dir/agentenv'{HOOK_ARGS}"),
        ] {
            assert!(hook_program(&c).is_some(), "{c}");
        }
        // The hand-written hook of earlier READMEs.
        assert_eq!(
            hook_program("agentenv env --diff --format export --cache --into \"$CLAUDE_ENV_FILE\""),
            Some("agentenv".to_string())
        );
        for c in [
            format!("other{HOOK_ARGS}"),
            format!("/x/agentenv-old{HOOK_ARGS}"),
            "agentenv env".to_string(),
            "agentenv env --diff".to_string(),
            "agentenv exec -- x --into \"$CLAUDE_ENV_FILE\"".to_string(),
            format!("agentenv{HOOK_ARGS} && rm -rf x"),
            format!("agentenv{HOOK_ARGS}; echo"),
            format!("echo; agentenv{HOOK_ARGS}"),
            format!("'agentenv{HOOK_ARGS}"),
        ] {
            assert!(hook_program(&c).is_none(), "{c}");
        }
        assert_eq!(sh_quote("/usr/bin/agentenv"), "/usr/bin/agentenv");
        assert_eq!(sh_quote("/a b/it's"), "'/a b/it'\\''s'");
        assert_eq!(
            hook_program(&format!("{}{HOOK_ARGS}", sh_quote("/a b/it's/agentenv"))),
            Some("/a b/it's/agentenv".to_string())
        );
    }

    #[test]
    fn shape_and_syntax_errors_name_no_text() {
        let e = parse_settings(b"{\n  \"a\": secretvalue\n}").unwrap_err();
        assert_eq!(e, "not valid JSON: syntax error at line 2, column 8");
        let e = parse_settings(b"{\"a\": \"x").unwrap_err();
        assert!(
            e.starts_with("not valid JSON: unexpected end at line 1"),
            "{e}"
        );
        let e = parse_settings(b"{\n\"a\": \"\xff\"}").unwrap_err();
        assert_eq!(e, "not valid JSON: not UTF-8 at line 2, column 7");
        assert_eq!(parse_settings(b"  \n").unwrap(), serde_json::json!({}));
        let mut v = serde_json::json!([1]);
        assert!(add_hook(&mut v, CMD).is_err());
        let mut v = serde_json::json!({"hooks": []});
        assert_eq!(
            add_hook(&mut v, CMD),
            Err("\"hooks\" is not an object".into())
        );
        let mut v = serde_json::json!({"hooks": {"SessionStart": {}}});
        assert!(remove_hook(&mut v).is_err());
    }
}
