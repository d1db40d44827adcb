//! `agentenv init claude|codex [--user | --project DIR] [--dry-run] [--remove]
//! [--export-values]` (docs/integrations.md#integrations): wire an agent so that its
//! session holds no sensitive value.
//!
//! Claude Code (`settings.json`) gets:
//! * a `SessionStart` hook writing only the **public** variables into
//!   `$CLAUDE_ENV_FILE` (`agentenv env --public-only --require-trust
//!   --diff --cache --into "$CLAUDE_ENV_FILE" -q`: the client pastes that
//!   file into the command line of every shell command, so nothing
//!   sensitive may be in it; nothing on stdout, which reaches the model);
//! * a `PreToolUse` hook (`agentenv hook claude pre-tool-use`) on the shell
//!   tool — each command runs with the sensitive variables and masked
//!   output (`agent_hook`) — and on the file tools, which it denies a
//!   store's paths;
//! * `permissions.deny` rules for the stores (`Read(~/.agents/**)`, …).
//!
//! `--export-values` restores the earlier wiring (every value in the
//! agent's environment) for a client that cannot rewrite commands; its
//! start hook then says so to the user at every session start.
//!
//! Codex (`hooks.json` in `$CODEX_HOME`, else `~/.codex`, or `DIR/.codex`)
//! gets the same two hooks with `$CODEX_ENV_FILE`.
//!
//! **The file is edited as text** (`jsonedit`): only agentenv's own
//! entries are inserted, replaced or removed; every other byte stays —
//! whitespace, key order, big numbers, escapes, duplicate keys in objects
//! `init` does not look into. A duplicate key on the way to agentenv's
//! entries, or a file that is not JSON, is refused with a line and column
//! (never text), and the file is left as it was. A project's settings file
//! (or its `.claude` directory) that is a symbolic link leading out of the
//! project is refused: a cloned repository must not choose which of the
//! user's files `init` rewrites.
//!
//! **How the hooks name agentenv.** In the user settings the command starts
//! with agentenv's absolute path (a launcher's `PATH` often lacks
//! `~/.cargo/bin`): the `PATH` entry that is the running binary, else the
//! binary itself, single-quoted when it needs it. In a project's settings
//! (committed, shared) the bare name `agentenv`.
//!
//! An entry is agentenv's when a command hook's first word — parsed as the
//! shell parses it, quotes and all — names a file called `agentenv`, and the
//! rest is `env … --into "$CLAUDE_ENV_FILE"` (also the hand-written hook of
//! earlier READMEs) / `"$CODEX_ENV_FILE"`, or `hook claude|codex …`.
//! Re-running updates such an entry in place; `--remove` takes them out.

pub use super::client::Client;
use crate::jsonedit::{self, Node, Style};
use serde_json::{json, Value};

/// The Claude SessionStart command after the program.
pub const HOOK_ARGS: &str = " hook claude session-start";

/// What `init` writes: the commands of the two hooks, and the deny rules.
#[derive(Debug, Clone)]
pub struct Wiring {
    pub client: Client,
    /// The program the hooks name (unquoted): a hook running it is ours
    /// even when its file name is not `agentenv`.
    pub program: String,
    pub session_start: String,
    pub pre_tool_use: String,
    pub matcher: String,
}

impl Wiring {
    /// The wiring naming agentenv as `program` (already shell-quoted):
    /// the start hook (`env --public-only --require-trust --diff --cache
    /// --into "$CLAUDE_ENV_FILE"` plus the functions the rewritten
    /// commands call; every value with `--export-values`), the
    /// `PreToolUse` hook on the client's tools, its permission rules.
    pub fn new(client: Client, program: &str, export_values: bool) -> Wiring {
        let name = client.name();
        let flag = if export_values {
            " --export-values"
        } else {
            ""
        };
        Wiring {
            client,
            program: first_word(program).map(|w| w.0).unwrap_or_default(),
            session_start: format!("{program} hook {name} session-start{flag}"),
            pre_tool_use: format!("{program} hook {name} pre-tool-use"),
            matcher: client.matcher(),
        }
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

/// The first shell word of `command` (quotes removed as `sh` removes
/// them) and the rest after it; `None` when it holds an expansion or an
/// operator (then it is not a plain program name).
fn first_word(command: &str) -> Option<(String, &str)> {
    let mut word = String::new();
    let mut chars = command.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ' ' | '\t' => {
                if word.is_empty() {
                    continue;
                }
                return Some((word, &command[i..]));
            }
            '\'' => loop {
                match chars.next() {
                    Some((_, '\'')) => break,
                    Some((_, c)) => word.push(c),
                    None => return None,
                }
            },
            '"' => loop {
                match chars.next() {
                    Some((_, '"')) => break,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, c @ ('"' | '\\' | '$' | '`'))) => word.push(c),
                        Some((_, '\n')) => {}
                        Some((_, c)) => {
                            word.push('\\');
                            word.push(c);
                        }
                        None => return None,
                    },
                    Some((_, '$' | '`')) => return None,
                    Some((_, c)) => word.push(c),
                    None => return None,
                }
            },
            '\\' => match chars.next() {
                Some((_, c)) => word.push(c),
                None => return None,
            },
            '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '\n' | '*' | '?' | '[' => {
                return None
            }
            c => word.push(c),
        }
    }
    (!word.is_empty()).then_some((word, ""))
}

/// Which of agentenv's hooks `command` is, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ours {
    SessionStart,
    PreToolUse,
}

fn classify(command: &str, client: Client, own: &str) -> Option<Ours> {
    let (prog, rest) = first_word(command)?;
    if prog.rsplit('/').next() != Some("agentenv") && prog != own {
        return None;
    }
    if rest.contains([';', '&', '|', '`', '(', ')', '<', '>', '\n', '\\']) {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let var = format!("\"${}\"", client.facts().env_file_var);
    match words.as_slice() {
        ["env", ..] if words.windows(2).any(|w| w[0] == "--into" && w[1] == var) => {
            Some(Ours::SessionStart)
        }
        ["hook", c, "session-start", ..] if *c == client.name() => Some(Ours::SessionStart),
        ["hook", c, "pre-tool-use", ..] if *c == client.name() => Some(Ours::PreToolUse),
        _ => None,
    }
}

fn is_ours(hook: &Node, which: Ours, w: &Wiring) -> bool {
    hook.get("type").and_then(Node::as_str) == Some("command")
        && hook
            .get("command")
            .and_then(Node::as_str)
            .and_then(|c| classify(c, w.client, &w.program))
            == Some(which)
}

fn event_name(w: &Wiring, which: Ours) -> &'static str {
    let f = w.client.facts();
    match which {
        Ours::SessionStart => f.session_start_event,
        Ours::PreToolUse => f.pre_tool_use_event,
    }
}

fn group_for(w: &Wiring, which: Ours) -> Value {
    match which {
        Ours::SessionStart => json!({"hooks": [{"type": "command", "command": w.session_start}]}),
        Ours::PreToolUse => json!({
            "matcher": w.matcher,
            "hooks": [{"type": "command", "command": w.pre_tool_use}]
        }),
    }
}

/// The object member `key` of `obj`, which must be unique and of the
/// right kind; `path` names it in messages.
fn member<'a>(
    text: &str,
    obj: &'a Node,
    key: &str,
    path: &str,
    want_array: bool,
) -> Result<Option<(usize, &'a Node)>, String> {
    let found = obj
        .get_unique(text, key)
        .map_err(|e| format!("{path}: {e}"))?;
    if let Some((_, n)) = found {
        let ok = if want_array {
            n.is_array()
        } else {
            n.is_object()
        };
        if !ok {
            return Err(format!(
                "\"{path}\" is not {}",
                if want_array { "an array" } else { "an object" }
            ));
        }
    }
    Ok(found)
}

/// The text with `root` parsed (an empty file is `{}`).
fn parse_root(text: &str) -> Result<(String, Node), String> {
    let text = if text.trim().is_empty() {
        "{}".to_string()
    } else {
        text.to_string()
    };
    let root = jsonedit::parse(&text)?.expect("not empty");
    if !root.is_object() {
        return Err("the top level is not a JSON object".into());
    }
    Ok((text, root))
}

/// One step of adding: the edited text, or `None` when nothing is left
/// to do. `updated` is set when an entry was rewritten in place.
fn add_step(text: &str, w: &Wiring, updated: &mut bool) -> Result<Option<String>, String> {
    let (text, root) = parse_root(text)?;
    let st = Style::of(&text);
    let Some((_, hooks)) = member(&text, &root, "hooks", "hooks", false)? else {
        let (start, pre) = (
            event_name(w, Ours::SessionStart),
            event_name(w, Ours::PreToolUse),
        );
        let v = json!({
            start: [group_for(w, Ours::SessionStart)],
            pre: [group_for(w, Ours::PreToolUse)],
        });
        return Ok(Some(jsonedit::add_member(&text, &root, &st, "hooks", &v)));
    };
    for which in [Ours::SessionStart, Ours::PreToolUse] {
        let ev = event_name(w, which);
        let want = match which {
            Ours::SessionStart => &w.session_start,
            Ours::PreToolUse => &w.pre_tool_use,
        };
        let Some((_, groups)) = member(&text, hooks, ev, &format!("hooks.{ev}"), true)? else {
            let v = json!([group_for(w, which)]);
            return Ok(Some(jsonedit::add_member(&text, hooks, &st, ev, &v)));
        };
        let mut found = false;
        for group in groups.items() {
            let Some(list) = group.get("hooks").filter(|l| l.is_array()) else {
                continue;
            };
            for hook in list.items() {
                if is_ours(hook, which, w) {
                    let cmd = hook.get("command").expect("checked");
                    if found {
                        // A second one (an earlier init that did not
                        // recognise its own): take it out.
                        return Ok(Some(remove_hook_at(&text, groups, group, list, hook)));
                    }
                    found = true;
                    if cmd.as_str() != Some(want.as_str()) {
                        *updated = true;
                        let q = serde_json::to_string(want).expect("a string serializes");
                        return Ok(Some(jsonedit::replace(&text, cmd, &q)));
                    }
                }
            }
        }
        if !found {
            return Ok(Some(jsonedit::add_item(
                &text,
                groups,
                &st,
                &group_for(w, which),
            )));
        }
    }
    // The client's permission rules (`allow`: Claude Code then lets the
    // rewrite's one call through; the command's own words are checked as
    // ever).
    let f = w.client.facts();
    for (key, rules) in [("deny", f.deny_rules), ("allow", f.allow_rules)] {
        if rules.is_empty() {
            continue;
        }
        let Some((_, perms)) = member(&text, &root, "permissions", "permissions", false)? else {
            let v = json!({ key: rules });
            return Ok(Some(jsonedit::add_member(
                &text,
                &root,
                &st,
                "permissions",
                &v,
            )));
        };
        let path = format!("permissions.{key}");
        let Some((_, list)) = member(&text, perms, key, &path, true)? else {
            return Ok(Some(jsonedit::add_member(
                &text,
                perms,
                &st,
                key,
                &json!(rules),
            )));
        };
        for rule in rules {
            if !list.items().iter().any(|n| n.as_str() == Some(rule)) {
                return Ok(Some(jsonedit::add_item(&text, list, &st, &json!(rule))));
            }
        }
    }
    Ok(None)
}

/// Remove `hook` (in `list`, the `hooks` of `group`, an item of
/// `groups`): the group goes when it held nothing else.
fn remove_hook_at(text: &str, groups: &Node, group: &Node, list: &Node, hook: &Node) -> String {
    let (parent, item) = if list.items().len() == 1 {
        (groups, group)
    } else {
        (list, hook)
    };
    let i = parent
        .items()
        .iter()
        .position(|n| n.start == item.start)
        .expect("an item");
    jsonedit::remove_entry(text, parent, i)
}

/// One step of removing: the edited text, or `None` when nothing of
/// agentenv's is left.
fn remove_step(text: &str, w: &Wiring) -> Result<Option<String>, String> {
    let (text, root) = parse_root(text)?;
    if let Some((hi, hooks)) = member(&text, &root, "hooks", "hooks", false)? {
        for which in [Ours::SessionStart, Ours::PreToolUse] {
            let ev = event_name(w, which);
            let Some((ei, groups)) = member(&text, hooks, ev, &format!("hooks.{ev}"), true)? else {
                continue;
            };
            for group in groups.items() {
                let Some(list) = group.get("hooks").filter(|l| l.is_array()) else {
                    continue;
                };
                for hook in list.items() {
                    if is_ours(hook, which, w) {
                        let out = remove_hook_at(&text, groups, group, list, hook);
                        // An event (and `hooks`) left empty goes too.
                        let (out2, root2) = parse_root(&out)?;
                        let hooks2 = &root2.members()[hi].value;
                        if hooks2.members()[ei].value.items().is_empty() {
                            let out3 = jsonedit::remove_entry(&out2, hooks2, ei);
                            let (out4, root4) = parse_root(&out3)?;
                            if root4.members()[hi].value.members().is_empty() {
                                return Ok(Some(jsonedit::remove_entry(&out4, &root4, hi)));
                            }
                            return Ok(Some(out3));
                        }
                        return Ok(Some(out2));
                    }
                }
            }
        }
    }
    // The client's permission rules (`allow`: Claude Code then lets the
    // rewrite's one call through; the command's own words are checked as
    // ever).
    let f = w.client.facts();
    for (key, rules) in [("deny", f.deny_rules), ("allow", f.allow_rules)] {
        if rules.is_empty() {
            continue;
        }
        let Some((pi, perms)) = member(&text, &root, "permissions", "permissions", false)? else {
            continue;
        };
        let path = format!("permissions.{key}");
        let Some((di, list)) = member(&text, perms, key, &path, true)? else {
            continue;
        };
        let Some(i) = list
            .items()
            .iter()
            .position(|n| n.as_str().is_some_and(|s| rules.contains(&s)))
        else {
            continue;
        };
        let out = jsonedit::remove_entry(&text, list, i);
        let (out2, root2) = parse_root(&out)?;
        let perms2 = &root2.members()[pi].value;
        // An emptied list takes `permissions` with it when that holds
        // nothing else but empty `deny`/`allow` lists (the user's own
        // `"deny": []` next to other rules stays).
        let only_empty = perms2.members().iter().all(|m| {
            (m.key == "deny" || m.key == "allow")
                && m.value.is_array()
                && m.value.items().is_empty()
        });
        let _ = di;
        if only_empty {
            return Ok(Some(jsonedit::remove_entry(&out2, &root2, pi)));
        }
        return Ok(Some(out2));
    }
    Ok(None)
}

/// Add (or update) agentenv's entries in the settings `text` (pure).
pub fn add_wiring(text: &str, w: &Wiring) -> Result<(String, Outcome), String> {
    let mut cur = text.to_string();
    let mut updated = false;
    let mut steps = 0;
    while let Some(next) = add_step(&cur, w, &mut updated)? {
        cur = next;
        steps += 1;
        assert!(steps < 64, "init: the edit does not converge");
    }
    let outcome = match (steps, updated) {
        (0, _) => Outcome::AlreadyPresent,
        (_, true) => Outcome::Updated,
        _ => Outcome::Added,
    };
    Ok((cur, outcome))
}

/// Take agentenv's entries out of the settings `text` (pure).
pub fn remove_wiring(text: &str, w: &Wiring) -> Result<(String, Outcome), String> {
    let mut cur = text.to_string();
    let mut steps = 0;
    while let Some(next) = remove_step(&cur, w)? {
        cur = next;
        steps += 1;
        assert!(steps < 256, "init: the removal does not converge");
    }
    Ok((
        cur,
        if steps == 0 {
            Outcome::NotPresent
        } else {
            Outcome::Removed
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compat::sh::shlex_quote;

    fn w() -> Wiring {
        Wiring::new(Client::Claude, "/opt/bin/agentenv", false)
    }

    const USER: &str = r#"{
  "zeta": 1,
  "big": 12345678901234567890123,
  "env": {"A": "1"}, "env": {"B": "2"},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "other"}]}]
  },
  "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./secrets/**)"]},
  "alpha": {"b": 2, "a": 1e400}
}
"#;

    #[test]
    fn add_and_remove_keep_every_other_byte() {
        let (added, o) = add_wiring(USER, &w()).unwrap();
        assert_eq!(o, Outcome::Added);
        // Everything that was there is still there, byte for byte, in order.
        let mut rest = added.as_str();
        for piece in [
            "\"zeta\": 1,",
            "\"big\": 12345678901234567890123,",
            "\"env\": {\"A\": \"1\"}, \"env\": {\"B\": \"2\"},",
            "{\"type\": \"command\", \"command\": \"x\"}",
            "\"command\": \"other\"}]}",
            "\"Read(./secrets/**)\"",
            "\"alpha\": {\"b\": 2, \"a\": 1e400}",
        ] {
            let at = rest
                .find(piece)
                .unwrap_or_else(|| panic!("{piece} in {added}"));
            rest = &rest[at + piece.len()..];
        }
        let v: Value = serde_json::from_str(&added.replace("1e400", "1")).unwrap();
        assert_eq!(
            v["hooks"]["SessionStart"][1]["hooks"][0]["command"],
            format!("/opt/bin/agentenv{HOOK_ARGS}")
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "/opt/bin/agentenv hook claude pre-tool-use"
        );
        assert_eq!(v["permissions"]["deny"].as_array().unwrap().len(), 5);
        // Again: nothing to do.
        assert_eq!(
            add_wiring(&added, &w()).unwrap(),
            (added.clone(), Outcome::AlreadyPresent)
        );
        // Removal gives the original text back.
        assert_eq!(
            remove_wiring(&added, &w()).unwrap(),
            (USER.to_string(), Outcome::Removed)
        );
        assert_eq!(remove_wiring(USER, &w()).unwrap().1, Outcome::NotPresent);
    }

    #[test]
    fn an_empty_or_new_file_gets_everything_and_loses_it_again() {
        for t in ["", "{}", "  \n"] {
            let (added, _) = add_wiring(t, &w()).unwrap();
            let v: Value = serde_json::from_str(&added).unwrap();
            assert!(v["hooks"]["SessionStart"].is_array(), "{added}");
            let (back, o) = remove_wiring(&added, &w()).unwrap();
            assert_eq!(o, Outcome::Removed);
            assert_eq!(back, "{}");
        }
    }

    #[test]
    fn duplicate_keys_on_the_way_are_refused() {
        let t = "{\"hooks\": {}, \"hooks\": {\"Stop\": []}}";
        let e = add_wiring(t, &w()).unwrap_err();
        assert!(
            e.contains("\"hooks\" appears twice") && e.contains("line 1, column 15"),
            "{e}"
        );
        let t = "{\"hooks\": {\"SessionStart\": [], \"SessionStart\": []}}";
        assert!(add_wiring(t, &w()).is_err());
        let t = "{\"permissions\": {\"deny\": [], \"deny\": []}, \"hooks\": {}}";
        assert!(add_wiring(t, &w()).is_err());
        let e = add_wiring("{\"hooks\": []}", &w()).unwrap_err();
        assert_eq!(e, "\"hooks\" is not an object");
        assert!(add_wiring("[1]", &w()).is_err());
        let e = add_wiring("{\n  \"a\": secretvalue\n}", &w()).unwrap_err();
        assert!(
            e.contains("line 2, column 8") && !e.contains("secretvalue"),
            "{e}"
        );
    }

    #[test]
    fn the_old_hooks_are_updated_in_place_not_duplicated() {
        for old in [
            "agentenv env --diff --format export --cache --into \"$CLAUDE_ENV_FILE\"",
            "/usr/bin/agentenv env --diff --cache --into \"$CLAUDE_ENV_FILE\" -q",
        ] {
            let t = json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": old}]}]}})
                .to_string();
            let (out, o) = add_wiring(&t, &w()).unwrap();
            assert_eq!(o, Outcome::Updated);
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["hooks"]["SessionStart"].as_array().unwrap().len(), 1);
            assert_eq!(
                v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
                format!("/opt/bin/agentenv{HOOK_ARGS}")
            );
        }
    }

    #[test]
    fn its_own_hook_is_recognised_whatever_the_path_holds() {
        for path in [
            "/usr/bin/agentenv",
            "/my dir/agentenv",
            "/x/a' b/agentenv",
            "/x/it's/agentenv",
            "/x/$(touch PWN)/`y`/\"q\"/agentenv",
        ] {
            let prog = shlex_quote(path);
            let wiring = Wiring::new(Client::Claude, &prog, false);
            let (once, _) = add_wiring("{}", &wiring).unwrap();
            let (twice, o) = add_wiring(&once, &wiring).unwrap();
            assert_eq!(o, Outcome::AlreadyPresent, "{path}");
            assert_eq!(once, twice);
            assert_eq!(first_word(&wiring.pre_tool_use).unwrap().0, path);
            // The quoted command runs the program it names under sh -c.
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {prog}")])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), path);
            let (gone, _) = remove_wiring(&twice, &wiring).unwrap();
            assert_eq!(gone, "{}");
        }
        // Another file name: its own program's hook is still recognised.
        let other = Wiring::new(Client::Claude, "/tmp/ae-build", false);
        let (once, _) = add_wiring("{}", &other).unwrap();
        assert_eq!(
            add_wiring(&once, &other).unwrap().1,
            Outcome::AlreadyPresent
        );
        for c in [
            "other env --into \"$CLAUDE_ENV_FILE\"",
            "/x/agentenv-old hook claude pre-tool-use",
            "agentenv env --diff",
            "agentenv hook claude pre-tool-use; rm -rf x",
            "echo; agentenv hook claude pre-tool-use",
            "$(agentenv) hook claude pre-tool-use",
            "agentenv hook codex pre-tool-use",
        ] {
            assert_eq!(
                classify(c, Client::Claude, "/usr/bin/agentenv"),
                None,
                "{c}"
            );
        }
        assert_eq!(
            classify(
                "\"/a b\"/agentenv hook codex pre-tool-use",
                Client::Codex,
                ""
            ),
            Some(Ours::PreToolUse)
        );
    }

    #[test]
    fn codex_wiring_uses_its_env_file_and_no_permissions() {
        let wc = Wiring::new(Client::Codex, "agentenv", false);
        let (out, _) = add_wiring("{}", &wc).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .ends_with(" hook codex session-start"));
        assert!(v.get("permissions").is_none());
        // Claude's entries are not Codex's.
        let (claude, _) = add_wiring("{}", &w()).unwrap();
        assert_eq!(remove_wiring(&claude, &wc).unwrap().1, Outcome::NotPresent);
    }

    #[test]
    fn export_values_swaps_the_start_hook_in_place() {
        let (plain, _) = add_wiring("{}", &w()).unwrap();
        let ev = Wiring::new(Client::Claude, "/opt/bin/agentenv", true);
        let (out, o) = add_wiring(&plain, &ev).unwrap();
        assert_eq!(o, Outcome::Updated);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "/opt/bin/agentenv hook claude session-start --export-values"
        );
        let (back, _) = add_wiring(&out, &w()).unwrap();
        assert_eq!(back, plain);
    }
}
