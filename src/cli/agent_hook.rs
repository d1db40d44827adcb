//! `agentenv hook claude|codex EVENT`: the hooks `init claude` and `init
//! codex` install (README.md#claude-code-the-session-holds-no-secret-values).
//! The agent's session holds no sensitive value: its shell gets them for one
//! command at a time, with that command's output masked.
//!
//! * `pre-tool-use` reads the client's hook event (JSON) on stdin.
//!   - A shell command (`Bash`) is rewritten through the documented
//!     `hookSpecificOutput.updatedInput` to run **in the agent's own shell**
//!     (so a `cd`, the exit status and everything else the client tracks
//!     stay as without agentenv) after one call, on lines of its own:
//!     ```text
//!     __agentenv_begin AGENTENV claude ENTRY
//!     ORIGINAL
//!     ```
//!     `__agentenv_begin` ([`FUNCTIONS`], in the session env file) starts
//!     `agentenv hook claude wrap --entry ENTRY` (one process per command,
//!     `agent_fifo`), which reads the sensitive variables from the cache
//!     entry this hook wrote and sends the shell, over a pipe (never a
//!     command line), their `export`s once the shell's stdout and stderr
//!     go into two FIFOs it masks (`crate::mask`) onto the command's real
//!     stdout and stderr; an EXIT trap (`__agentenv_end`) hands the output
//!     back. In bash and zsh (in zsh the trap is set under `posix_traps`,
//!     so it is the shell's, not the function's); in any other shell the
//!     command runs without the values.
//!   - A file tool (Read, Edit, Write, Grep, Glob, …) aimed at a store
//!     (`~/.agents`, any `.agents` directory, the cache) is denied with a
//!     reason the agent reads: the file holds secrets; use the variable by
//!     name (`agentenv explain` lists the names).
//!   - Invalid input: a message on stderr, exit 1 (a non-blocking hook
//!     error): the client runs the original command unchanged — never a
//!     broken one.
//! * `wrap --entry ENTRY` is the per-command helper above (internal;
//!   `run`, its name before, answers that the session's functions are an
//!   older agentenv's).
//!
//! What is sensitive is the session's decision (`Session::
//! sensitive_values`); the values come from an owner-only cache entry
//! (the session's cache, `session::plan`'s `CacheMode::Entry`) keyed like `env --cache` by the stores and the
//! client's environment, so a command on a cache hit runs no layer.

use super::{Exit, Failure};
use serde_json::{json, Map, Value};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest hook event read (a 1 MiB command is well inside).
const MAX_EVENT: u64 = 64 << 20;

/// The format name the cache key gets for the hook's entries (nothing
/// else renders it, so the keys never meet `env --cache`'s).
const ENTRY_FORMAT: &str = "agentenv-hook-sensitive-v1";

/// How long a cache entry must still be fresh when a command starts.
const ENTRY_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

/// The reason a denied file tool gives the agent.
pub const DENY_REASON: &str = "agentenv: this path is an agent store (or its cache): it holds secret values. Do not read it; use the variable by name in a shell command (e.g. \"$GH_TOKEN\"); `agentenv explain` lists the names.";

/// Which client's hook protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Claude,
    Codex,
    Gemini,
    OpenCode,
    Copilot,
}

impl Client {
    pub fn parse(s: &str) -> Option<Client> {
        match s {
            "claude" => Some(Client::Claude),
            "codex" => Some(Client::Codex),
            "gemini" => Some(Client::Gemini),
            "opencode" => Some(Client::OpenCode),
            "copilot" => Some(Client::Copilot),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::OpenCode => "opencode",
            Client::Copilot => "copilot",
        }
    }
    /// Whether the rewritten command sources the prologue file (the
    /// client has no session env file holding [`FUNCTIONS`]).
    fn sources_prologue(self) -> bool {
        self != Client::Claude
    }
    /// Whether the cache entry also carries the public variables' exports
    /// (the client has no other way to give them to each command).
    fn entry_has_public(self) -> bool {
        matches!(self, Client::Codex | Client::Gemini | Client::Copilot)
    }
}

/// `agentenv hook CLIENT EVENT [ARGS…]`.
pub fn run(client: Client, event: &str, export_values: bool, entry: Option<&Path>) -> Exit {
    match event {
        "pre-tool-use" => pre_tool_use(client),
        "after-tool" if client == Client::Gemini => super::agent_clients::after_tool(),
        "shell-env" if client == Client::OpenCode => super::agent_clients::shell_env(),
        "session-start" if matches!(client, Client::Claude | Client::Codex) => {
            session_start(client, export_values)
        }
        "daemon" => super::agent_daemon::serve(),
        "wrap" => match entry {
            Some(entry) => run_command_helper(entry),
            None => Err(Failure::usage("hook CLIENT wrap needs --entry FILE")),
        },
        // The helper's name before the one-thread handshake: the shell
        // functions in this session's env file are an older agentenv's.
        "run" if entry.is_some() => Err(Failure::runtime(
            "this session's shell functions are from an older agentenv: start a new session \
             to load them again",
        )),
        other => Err(Failure::usage(format!(
            "unknown hook event '{}' for {} (known: {})",
            other.escape_debug(),
            client.name(),
            match client {
                Client::Claude | Client::Codex => "pre-tool-use, session-start",
                Client::Gemini => "pre-tool-use, after-tool",
                Client::OpenCode => "pre-tool-use, shell-env",
                Client::Copilot => "pre-tool-use",
            }
        ))),
    }
}

/// `hook CLIENT wrap --entry FILE` exactly as `__agentenv_begin` writes it,
/// parsed without clap: the helper is a process per shell command, and
/// building clap's tree of every command touches a good part of the
/// binary's pages. `None`: anything else, for clap.
pub fn wrap_fast_path(args: impl Iterator<Item = std::ffi::OsString>) -> Option<Exit> {
    let args: Vec<std::ffi::OsString> = args.take(7).collect();
    match args.as_slice() {
        [_, hook, client, wrap, flag, entry]
            if hook == "hook" && wrap == "wrap" && flag == "--entry" && !entry.is_empty() =>
        {
            let client = Client::parse(client.to_str()?)?;
            Some(run(client, "wrap", false, Some(Path::new(entry))))
        }
        _ => None,
    }
}

/// What the user sees at each session start under `--export-values`
/// (the client shows a hook's `systemMessage` to the user).
pub const EXPORT_VALUES_WARNING: &str = "agentenv: this session's environment holds the values of the sensitive variables (init --export-values): the agent can print them into its context. Run `agentenv init claude` (or codex) without --export-values to keep them out.";

/// `hook CLIENT session-start [--export-values]`: the session env into
/// `$CLAUDE_ENV_FILE` / `$CODEX_ENV_FILE` — the public variables only
/// (`env --public-only --require-trust --diff --cache --into`), or every
/// value with `--export-values`, which then warns the user (stderr and the
/// hook's `systemMessage`, never the model's context) — and [`FUNCTIONS`],
/// which the rewritten commands call.
fn session_start(client: Client, export_values: bool) -> Exit {
    let var = match client {
        Client::Codex => "CODEX_ENV_FILE",
        _ => "CLAUDE_ENV_FILE",
    };
    let base = crate::core::process_env();
    let Some(file) = crate::core::get(&base, var).filter(|v| !v.is_empty()) else {
        // Codex before 0.172 has no session env file: its PreToolUse hook
        // brings the public variables too.
        if client == Client::Codex {
            crate::info!("hook codex session-start: ${var} is not set; nothing written");
        } else {
            crate::warn!("hook claude session-start: ${var} is not set; nothing written");
        }
        return Ok(0);
    };
    let args = super::session::EnvArgs {
        scope: super::session::ScopeArgs {
            global: false,
            agents_dir: None,
            timeout: None,
            require_trust: true,
        },
        format: "export".into(),
        diff: true,
        cache: true,
        into: Some(PathBuf::from(file)),
        public_only: !export_values,
    };
    let status = super::session::run_env(args)?;
    // The functions the rewritten commands call (no value in them).
    let path = Path::new(file);
    let current = std::fs::read_to_string(path).unwrap_or_default();
    super::write_file(
        path,
        with_functions(&current).as_bytes(),
        crate::fsutil::Mode::Private,
        false,
        |path, kind| format!("${var} {path}: cannot write it ({kind})"),
    )?;
    if export_values {
        crate::warn!("{}", EXPORT_VALUES_WARNING.trim_start_matches("agentenv: "));
        let msg = json!({ "systemMessage": EXPORT_VALUES_WARNING }).to_string() + "\n";
        super::write_stdout(msg.as_bytes())?;
    }
    Ok(status)
}

/// A non-blocking hook error: the message on stderr, exit 1. The client
/// then runs the tool with its original input.
fn soft_error(msg: impl std::fmt::Display) -> Exit {
    crate::error!("{msg}; the tool runs unchanged (without the session's sensitive variables)");
    Ok(1)
}

fn pre_tool_use(client: Client) -> Exit {
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().take(MAX_EVENT + 1).read_to_end(&mut raw) {
        return soft_error(format!(
            "hook {} pre-tool-use: cannot read the event on stdin ({})",
            client.name(),
            crate::fsutil::io_kind(&e)
        ));
    }
    if raw.len() as u64 > MAX_EVENT {
        return soft_error(format!(
            "hook {} pre-tool-use: the event on stdin is larger than {} MiB",
            client.name(),
            MAX_EVENT >> 20
        ));
    }
    let event: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            return soft_error(format!(
                "hook {} pre-tool-use: the event on stdin is not valid JSON (line {}, column {})",
                client.name(),
                e.line(),
                e.column()
            ))
        }
    };
    let base = crate::core::process_env();
    let answer = match decide(client, &event, &base) {
        Ok(a) => a,
        Err(msg) => return soft_error(format!("hook {} pre-tool-use: {msg}", client.name())),
    };
    match answer {
        None => Ok(0),
        Some(v) => {
            let mut s = serde_json::to_string(&v).expect("a Value serializes");
            s.push('\n');
            super::print(s.as_bytes())
        }
    }
}

/// The file tools whose input names a path (Claude Code's).
const FILE_TOOLS: &[&str] = &[
    "Read",
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "NotebookRead",
    "Grep",
    "Glob",
    "LS",
];

/// The shell tools (Claude Code's `Bash`; Codex's names for its shell).
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "shell",
    "exec_command",
    "local_shell",
    "unified_exec",
];

/// What a client's tool is to the hook: its shell, a file tool (with the
/// input keys that name paths; `pattern` only for the glob tools, where it
/// is a path pattern, not a regex), or something else.
enum Tool {
    Shell,
    Files(&'static [&'static str]),
    Other,
}

fn tool_kind(client: Client, tool: &str) -> Tool {
    const PATHS: &[&str] = &["file_path", "notebook_path", "path", "glob"];
    const GLOB: &[&str] = &["path", "pattern"];
    match client {
        Client::Claude | Client::Codex => {
            if SHELL_TOOLS.contains(&tool) {
                Tool::Shell
            } else if tool == "Glob" {
                Tool::Files(GLOB)
            } else if FILE_TOOLS.contains(&tool) {
                Tool::Files(PATHS)
            } else {
                Tool::Other
            }
        }
        // Gemini CLI's tool names (its docs/tools).
        Client::Gemini => match tool {
            "run_shell_command" => Tool::Shell,
            "glob" => Tool::Files(&["dir_path", "pattern"]),
            "read_file" | "write_file" | "replace" | "list_directory" | "grep_search"
            | "read_many_files" => Tool::Files(&[
                "file_path",
                "dir_path",
                "path",
                "include_pattern",
                "include",
                "paths",
            ]),
            _ => Tool::Other,
        },
        // OpenCode's built-in tools.
        Client::OpenCode => match tool {
            "bash" => Tool::Shell,
            "glob" => Tool::Files(&["path", "pattern"]),
            "read" | "write" | "edit" | "multiedit" | "patch" | "list" | "grep" => {
                Tool::Files(&["filePath", "path", "include"])
            }
            _ => Tool::Other,
        },
        // Copilot CLI's (its hooks reference: tool names for matching).
        Client::Copilot => match tool {
            "bash" => Tool::Shell,
            "glob" => Tool::Files(&["path", "pattern"]),
            "view" | "create" | "edit" | "grep" => Tool::Files(&["path", "glob"]),
            _ => Tool::Other,
        },
    }
}

/// The tool's name and input in a client's event: `tool_name` /
/// `tool_input` (Claude Code, Codex, Gemini CLI, agentenv's OpenCode
/// plugin, Copilot's PascalCase events), or Copilot's `toolName` /
/// `toolArgs` (an object, or a JSON text of one).
fn tool_of(obj: &Map<String, Value>) -> (String, Option<Map<String, Value>>) {
    let tool = obj
        .get("tool_name")
        .or_else(|| obj.get("toolName"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let input = match obj.get("tool_input").or_else(|| obj.get("toolArgs")) {
        Some(Value::Object(m)) => Some(m.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        },
        _ => None,
    };
    (tool, input)
}

/// The answer to one PreToolUse event (`None`: nothing to say, the tool
/// runs as asked). `Err`: a message for a soft error.
pub fn decide(
    client: Client,
    event: &Value,
    base: &crate::core::Env,
) -> Result<Option<Value>, String> {
    let Some(obj) = event.as_object() else {
        return Err("the event is not a JSON object".into());
    };
    let (tool, input) = tool_of(obj);
    let Some(input) = input else {
        return Ok(None);
    };
    let cwd = obj
        .get("cwd")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    let keys = match tool_kind(client, &tool) {
        Tool::Other => return Ok(None),
        Tool::Files(keys) => keys,
        Tool::Shell => return shell(client, &input, base),
    };
    let stores = StorePaths::new(base);
    for &key in keys {
        let paths: Vec<&str> = match input.get(key) {
            Some(Value::String(p)) => vec![p.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if paths.iter().any(|p| stores.covers(&cwd, p)) {
            return Ok(Some(deny(client)));
        }
    }
    Ok(None)
}

/// The answer for the shell tool: its command rewritten (module doc).
fn shell(
    client: Client,
    input: &Map<String, Value>,
    base: &crate::core::Env,
) -> Result<Option<Value>, String> {
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Ok(None);
    };
    let Some((entry, prologue)) = sensitive_entry(base, client)? else {
        // Nothing sensitive in this session: nothing to do.
        return Ok(None);
    };
    let me = self_program();
    let daemon = super::agent_daemon::ensure(&me, client.name());
    let mut updated: Map<String, Value> = input.clone();
    updated.insert(
        "command".into(),
        Value::String(rewrite(
            command,
            &me,
            client.sources_prologue().then_some(prologue.as_path()),
            &entry,
            client,
            daemon.as_deref(),
        )),
    );
    let updated = Value::Object(updated);
    Ok(Some(match client {
        // Codex applies updatedInput only with "allow", which there is
        // not an approval (that is the PermissionRequest hook's): the
        // command still goes through Codex's approval policy and sandbox.
        Client::Claude | Client::Codex => {
            let mut out = json!({
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "updatedInput": updated,
                }
            });
            if client == Client::Codex {
                out["hookSpecificOutput"]["permissionDecision"] = json!("allow");
            }
            out
        }
        // BeforeTool: `tool_input` merges over the model's arguments.
        Client::Gemini => json!({
            "hookSpecificOutput": { "hookEventName": "BeforeTool", "tool_input": updated }
        }),
        // agentenv's own plugin reads `args`.
        Client::OpenCode => json!({ "args": updated }),
        // preToolUse: `modifiedArgs` replaces the arguments.
        Client::Copilot => json!({ "modifiedArgs": updated }),
    }))
}

fn deny(client: Client) -> Value {
    match client {
        Client::Claude | Client::Codex => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": DENY_REASON,
            }
        }),
        // The reason goes to the agent as the tool's error.
        Client::Gemini => json!({ "decision": "deny", "reason": DENY_REASON }),
        // The plugin throws it.
        Client::OpenCode => json!({ "deny": DENY_REASON }),
        Client::Copilot => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": DENY_REASON,
        }),
    }
}

/// Where the stores are, for the file tools' deny rule.
struct StorePaths {
    roots: Vec<PathBuf>,
}

impl StorePaths {
    fn new(base: &crate::core::Env) -> StorePaths {
        let mut roots = Vec::new();
        let get = |k: &str| crate::core::get(base, k).filter(|v| !v.is_empty());
        if let Some(h) = get("AGENTS_HOME") {
            roots.push(PathBuf::from(h));
        }
        if let Some(h) = get("HOME") {
            roots.push(Path::new(h).join(".agents"));
        }
        if let Some(s) = get("AGENTS_SYSTEM_ROOT") {
            roots.push(PathBuf::from(s));
        }
        let canon: Vec<PathBuf> = roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        roots.extend(canon);
        StorePaths { roots }
    }

    /// Whether `p` (relative to `cwd`; a glob pattern counts by its
    /// literal part) is in a store: under a store root, or through a
    /// directory named `.agents`, before or after resolving links.
    fn covers(&self, cwd: &Path, p: &str) -> bool {
        let p = p.trim_start_matches('!');
        let expanded = match p.strip_prefix("~/") {
            Some(rest) => match std::env::var_os("HOME") {
                Some(h) => Path::new(&h).join(rest),
                None => PathBuf::from(p),
            },
            None => PathBuf::from(p),
        };
        let abs = cwd.join(expanded);
        let lexical = normalize(&abs);
        let mut candidates = vec![lexical.clone()];
        // The longest existing prefix, resolved (a link into a store).
        let mut probe = lexical.clone();
        loop {
            if let Ok(c) = std::fs::canonicalize(&probe) {
                let rest = lexical.strip_prefix(&probe).unwrap_or(Path::new(""));
                candidates.push(c.join(rest));
                break;
            }
            if !probe.pop() {
                break;
            }
        }
        candidates.iter().any(|c| {
            c.components().any(|x| x.as_os_str() == ".agents")
                || self.roots.iter().any(|r| c.starts_with(r))
        })
    }
}

/// `.` and `..` taken out lexically.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// This binary's path, for the rewrite (the `PATH` the agent's shell has
/// may not hold agentenv).
fn self_program() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.into_os_string().into_string().ok())
        .unwrap_or_else(|| "agentenv".to_string())
}

/// The shell functions of a rewritten command (no value in them):
/// `__agentenv_begin PROGRAM CLIENT ENTRY` starts the helper, redirects
/// the shell's output into its FIFOs, reads the exports and sets an EXIT
/// trap; `__agentenv_end` (the trap) hands the output back and waits until
/// the helper has written all of it (zsh: the trap set under
/// `posix_traps`, else it would fire when begin returns; `$$` for the
/// shell's pid, the helper's way in a subshell). When anything fails, or
/// the shell is neither bash nor zsh, begin says so and the command runs
/// plainly, without the sensitive variables. The text parses in dash too
/// (the helper's process substitution is inside an `eval`). Claude
/// Code gets them through `$CLAUDE_ENV_FILE` (the session-start hook),
/// Codex by sourcing [`prologue_path`].
pub const FUNCTIONS: &str = r#": agentenv-hook-begin: the functions of a rewritten command, no value
__agentenv_end() {
  set -- "$?"
  [ -z "${__ae_c-}" ] && return "$1"
  [ -n "${BASH_VERSION-}" ] || setopt localoptions nowarncreateglobal
  printf x >&$__ae_c
  exec 1>&$__ae_o 2>&$__ae_e {__ae_o}>&- {__ae_e}>&- {__ae_c}>&-
  unset __ae_c
  IFS= read -r -u $__ae_s __ae_x
  exec {__ae_s}<&-
  unset __ae_x __ae_o __ae_e __ae_s
  return "$1"
}
__agentenv_undo() {
  [ -n "${__ae_o-}" ] && [ -n "${__ae_e-}" ] && { exec 1>&$__ae_o 2>&$__ae_e; } 2>/dev/null
  [ -n "${__ae_s-}" ] && exec {__ae_s}<&-
  [ -n "${__ae_o-}" ] && exec {__ae_o}>&-
  [ -n "${__ae_e-}" ] && exec {__ae_e}>&-
  [ -n "${__ae_c-}" ] && exec {__ae_c}>&-
  [ -n "${__ae_v-}" ] && exec {__ae_v}<&-
  unset __ae_d __ae_c __ae_o __ae_e __ae_s __ae_x __ae_p __ae_i __ae_n __ae_v
}
__agentenv_daemon() {
  [ -n "${4-}" ] && [ -d "/proc/${4%%:*}" ] || return 1
  __ae_x=${BASHPID-}
  if [ -z "${BASH_VERSION-}" ]; then [ "${ZSH_SUBSHELL-}" = 0 ] || return 1; __ae_x=$$; fi
  __ae_p=${4#*:}
  case $- in *C*) __ae_n= ;; *) __ae_n=1; set -C ;; esac
  for __ae_i in 0 1 2 3 4 5 6 7; do
    { true >"$__ae_p/$__ae_i/lock"; } 2>/dev/null && break
    __ae_i=
  done
  [ -n "$__ae_n" ] && set +C
  [ -n "$__ae_i" ] || return 1
  __ae_d=$__ae_p/$__ae_i
  [ -p "$__ae_d/c" ] || return 1
  exec {__ae_o}>&1 {__ae_e}>&2 {__ae_s}<>"$__ae_d/r" {__ae_c}<>"$__ae_d/c" || return 1
  printf '%s %s %s %s %s\n' "$__ae_x" "$__ae_o" "$__ae_e" "$2" "$3" >&$__ae_c
  IFS= read -r -t 5 -u $__ae_s __ae_x && [ "$__ae_x" = ok ] && exec {__ae_v}<"$__ae_d/v" >"$__ae_d/o" 2>"$__ae_d/e" && printf o >&$__ae_c && IFS= read -r -d '' -u $__ae_v __ae_x
}
__agentenv_helper() {
  exec {__ae_o}>&1 {__ae_e}>&2 && eval 'exec {__ae_s}< <(exec "$1" hook "$2" wrap --entry "$3" 0>&1 1>&$__ae_o 2>&$__ae_e {__ae_o}>&- {__ae_e}>&-)' && IFS= read -r -u $__ae_s __ae_d && exec {__ae_c}>"$__ae_d/c" >"$__ae_d/o" 2>"$__ae_d/e" && printf o >&$__ae_c && IFS= read -r -d '' -u $__ae_s __ae_x
}
__agentenv_begin() {
  unset __ae_c __ae_s __ae_o __ae_e __ae_v
  if [ -z "${BASH_VERSION-}${ZSH_VERSION-}" ]; then
    printf '%s\n' 'agentenv: the shell is not bash or zsh: this command runs without the sensitive variables' >&2
    return 0
  fi
  [ -n "${BASH_VERSION-}" ] || { setopt localoptions posixtraps nowarncreateglobal; unsetopt clobberempty 2>/dev/null || :; }
  if __agentenv_daemon "$@" || { __agentenv_undo; __agentenv_helper "$@"; }; then
    [ -n "${__ae_v-}" ] && exec {__ae_v}<&-
    eval "$__ae_x"
    unset __ae_x __ae_d __ae_p __ae_i __ae_n __ae_v
    trap __agentenv_end EXIT
  else
    __agentenv_undo
    printf '%s\n' 'agentenv: the sensitive variables could not be loaded for this command; it runs without them' >&2
  fi
}
: agentenv-hook-end
"#;

/// Codex's prologue file: `<user store>/.cache/agent-hook.bash`.
pub fn prologue_path(user_root: &Path) -> PathBuf {
    user_root.join(".cache").join("agent-hook.bash")
}

/// Write Codex's prologue file when it is missing or not this version's.
fn ensure_prologue(user_root: &Path) -> Result<PathBuf, String> {
    let path = prologue_path(user_root);
    let text = format!("{FUNCTIONS}__agentenv_begin \"$@\"\n");
    if std::fs::read(&path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(path);
    }
    let dir = path.parent().expect("a parent");
    crate::session::make_cache_dir(dir)
        .and_then(|()| {
            crate::fsutil::write_atomic(
                &path,
                text.as_bytes(),
                crate::fsutil::Mode::Exactly(0o600),
                false,
            )
        })
        .map_err(|e| {
            format!(
                "cannot write {} ({})",
                path.display(),
                crate::fsutil::io_kind(&e)
            )
        })?;
    Ok(path)
}

/// `FILE` with its functions block replaced by [`FUNCTIONS`] (or added).
pub fn with_functions(file: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in file.split_inclusive('\n') {
        if line.starts_with(": agentenv-hook-begin") {
            skipping = true;
            continue;
        }
        if skipping {
            if line.starts_with(": agentenv-hook-end") {
                skipping = false;
            }
            continue;
        }
        out.push_str(line);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(FUNCTIONS);
    out
}

/// A word for the rewrite: bare when plain, else single-quoted.
fn word(s: &str) -> String {
    crate::compat::sh::shlex_quote(s)
}

/// The command that runs `original` in the agent's shell with the
/// sensitive variables of `entry` and its output masked (module doc). The
/// original text stays as it is, on lines of its own after one call
/// (Claude Code: `__agentenv_begin …`, which a permission rule
/// `Bash(__agentenv_begin:*)` allows; Codex: `. FILE …`), so the client's
/// permission rules see the command's own words, and its status is the
/// last one, as without agentenv.
pub fn rewrite(
    original: &str,
    program: &str,
    prologue: Option<&Path>,
    entry: &Path,
    client: Client,
    daemon: Option<&str>,
) -> String {
    let call = match prologue {
        Some(p) => format!(". {}", word(&p.to_string_lossy())),
        None => "__agentenv_begin".to_string(),
    };
    let daemon = daemon.map(|d| format!(" {}", word(d))).unwrap_or_default();
    format!(
        "{call} {} {} {}{daemon}\n{original}",
        word(program),
        client.name(),
        word(&entry.to_string_lossy()),
    )
}

/// The cache entry holding this session's sensitive variables (written
/// now when missing or about to expire); `None` when there are none. For
/// Codex, which has no session env file before 0.172, the entry also
/// holds the `export` lines of the public variables.
pub(crate) fn sensitive_entry(
    base: &crate::core::Env,
    client: Client,
) -> Result<Option<(PathBuf, PathBuf)>, String> {
    let req = crate::session::Request {
        require_trust: true,
        cache: crate::session::CacheMode::Entry {
            format: format!("{ENTRY_FORMAT} {}", client.name()),
            fresh_for: ENTRY_MARGIN,
        },
        ..crate::session::Request::new(crate::session::Options::default())
    };
    let mut plan = crate::session::plan(&req, base).map_err(|e| e.to_string())?;
    crate::log::notes(&plan.take_notes());
    if let Some(why) = plan.cache_error() {
        return Err(why.to_string());
    }
    if let (Some(bytes), Some(entry)) = (plan.cached(), plan.cache_entry()) {
        if bytes == b"{}" {
            return Ok(None);
        }
        return Ok(Some((entry, ensure_prologue(plan.user_store())?)));
    }
    let session = plan.assemble();
    crate::log::notes(session.assembly.notes());
    let values = session.sensitive_values();
    let public = if client.entry_has_public() {
        let mut view = super::session::session_view(&session, true);
        super::session::keep_public(&session, &mut view);
        crate::render::render(crate::render::Format::Export, &view)
    } else {
        String::new()
    };
    let text = entry_text(&values, &public);
    let kept = plan.keep(text.as_bytes())?;
    if text == "{}" {
        return Ok(None);
    }
    match kept {
        Some(entry) => Ok(Some((entry, ensure_prologue(plan.user_store())?))),
        None => Err(format!(
            "cannot write the cache entry in {}",
            plan.cache_entry()
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(Path::new(""))
                .display()
        )),
    }
}

fn hex(b: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(H[(x >> 4) as usize] as char);
        s.push(H[(x & 15) as usize] as char);
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// An entry: `{"vars": [[NAME, HEX-VALUE], …], "public": "export …"}`
/// (`{}` when both are empty): names and values byte-exact, UTF-8 as the
/// cache wants.
fn entry_text(values: &[(String, Vec<u8>)], public: &str) -> String {
    if values.is_empty() && public.trim().is_empty() {
        return "{}".into();
    }
    let vars: Vec<Value> = values.iter().map(|(k, v)| json!([k, hex(v)])).collect();
    json!({ "vars": vars, "public": public }).to_string()
}

/// Sensitive variables: names and values.
pub(crate) type Values = Vec<(String, Vec<u8>)>;

/// The sensitive variables and the public `export` lines of an entry.
type Entry = (Vec<(String, Vec<u8>)>, String);

fn parse_entry(bytes: &[u8]) -> Option<Entry> {
    let v: Value = serde_json::from_slice(bytes).ok()?;
    let public = v
        .get("public")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(vars) = v.get("vars") else {
        return Some((Vec::new(), public));
    };
    let vars = vars
        .as_array()?
        .iter()
        .map(|p| {
            let name = p.get(0)?.as_str()?.to_string();
            let value = unhex(p.get(1)?.as_str()?)?;
            Some((name, value))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((vars, public))
}

/// A name the shell can assign.
fn shell_name(n: &str) -> bool {
    crate::compat::ident::is_name(n.as_bytes()) && !n.starts_with("__ae_")
}

/// The exports a rewritten command `eval`s (ended by NUL: sent once the
/// shell's output goes into the FIFOs) and the values to mask, from the
/// cache entry `entry`. `Err`: a value-free message.
pub(crate) fn load_entry(entry: &Path) -> Result<(Vec<u8>, Values), String> {
    if entry.parent().is_none() || entry.file_name().and_then(|k| k.to_str()).is_none() {
        return Err("hook run: the entry path has no file name".into());
    }
    let Some(bytes) = crate::session::read_entry(entry) else {
        return Err(format!(
            "the sensitive variables' cache entry {} is gone or stale",
            entry.display()
        ));
    };
    let Some((vars, public)) = parse_entry(&bytes) else {
        return Err(format!(
            "the cache entry {} is not agentenv's",
            entry.display()
        ));
    };
    let mut prologue: Vec<u8> = public.into_bytes();
    for (name, value) in &vars {
        if shell_name(name) {
            // A name zsh keeps for itself (read-only: the assignment would
            // end the `eval` there; `USERNAME`: zsh would change the
            // shell's user; `path`: `PATH`) is set in bash only.
            let zsh_own = crate::hook::shell_reserves(crate::hook::Shell::Zsh, name.as_bytes());
            if zsh_own {
                prologue.extend_from_slice(
                    format!(
                        "if [ -n \"${{ZSH_VERSION-}}\" ]; then printf '%s\\n' 'agentenv: zsh keeps \
                         {name} for itself: this command runs without it' >&2; else "
                    )
                    .as_bytes(),
                );
            }
            prologue.extend_from_slice(b"export ");
            prologue.extend_from_slice(name.as_bytes());
            prologue.push(b'=');
            prologue.extend_from_slice(&crate::compat::sh::single_quote(value));
            if zsh_own {
                prologue.extend_from_slice(b"; fi");
            }
            prologue.push(b'\n');
        }
    }
    prologue.push(0);
    Ok((prologue, vars))
}

/// `hook CLIENT wrap --entry ENTRY`: fd 0 is the pipe the shell reads the
/// FIFOs' directory, the exports (ended by NUL) and then a line when the
/// command's output is out from (`agent_fifo`); fds 1 and 2 are the
/// command's real stdout and stderr.
fn run_command_helper(entry: &Path) -> Exit {
    use std::os::fd::AsFd;
    let sync = match rustix::io::dup(std::io::stdin().as_fd()) {
        Ok(fd) => std::fs::File::from(fd),
        Err(_) => {
            return Err(Failure::usage(
                "hook run: stdin is not open (internal command)",
            ))
        }
    };
    let (prologue, vars) = load_entry(entry).map_err(Failure::runtime)?;
    let fifos = crate::cli::agent_fifo::Fifos::create().map_err(|e| {
        Failure::runtime(format!(
            "cannot create the masking FIFOs ({})",
            crate::fsutil::io_kind(&e)
        ))
    })?;
    crate::cli::agent_fifo::serve(fifos, sync, &prologue, vars)
        .map(|()| 0)
        .map_err(|e| {
            Failure::runtime(format!(
                "masking the command's output failed ({})",
                crate::fsutil::io_kind(&e)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_every_text() {
        for s in [
            "",
            "a'b",
            "'",
            "''",
            "$(x) `y` \"z\" \\",
            "a\nb\n",
            "é\u{1}\u{7f}",
        ] {
            let q = crate::compat::sh::shlex_quote(s);
            let out = std::process::Command::new("bash")
                .args(["-c", &format!("printf %s {q}")])
                .output()
                .unwrap();
            assert_eq!(out.stdout, s.as_bytes(), "{s:?}");
        }
    }

    #[test]
    fn the_shell_tries_every_slot_of_the_daemon() {
        let slots: Vec<String> = (0..crate::cli::agent_daemon::SLOTS)
            .map(|i| i.to_string())
            .collect();
        let want = format!("for __ae_i in {}; do", slots.join(" "));
        assert!(FUNCTIONS.contains(&want), "{want}");
    }

    #[test]
    fn only_the_exact_helper_line_skips_clap() {
        let a = |v: &[&str]| v.iter().map(std::ffi::OsString::from).collect::<Vec<_>>();
        for other in [
            &["agentenv", "hook", "claude", "wrap"][..],
            &["agentenv", "hook", "claude", "wrap", "--entry"],
            &["agentenv", "hook", "claude", "wrap", "--entry", ""],
            &["agentenv", "hook", "fish", "wrap", "--entry", "x"],
            &["agentenv", "hook", "claude", "run", "--entry", "x"],
            &["agentenv", "hook", "claude", "wrap", "--entry", "x", "-v"],
            &["agentenv", "-q", "hook", "claude", "wrap", "--entry"],
        ] {
            assert!(wrap_fast_path(a(other).into_iter()).is_none(), "{other:?}");
        }
    }

    #[test]
    fn entries_round_trip_bytes() {
        let v = vec![
            ("A".to_string(), b"x\xff\n'y".to_vec()),
            ("B".to_string(), Vec::new()),
        ];
        assert_eq!(
            parse_entry(entry_text(&v, "export X=1\n").as_bytes()),
            Some((v, "export X=1\n".to_string()))
        );
        assert_eq!(parse_entry(b"{}"), Some((Vec::new(), String::new())));
        assert_eq!(parse_entry(b"not json"), None);
    }

    #[test]
    fn store_paths_are_recognised() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(home.join(".agents")).unwrap();
        std::fs::create_dir_all(t.path().join("p/.agents")).unwrap();
        std::os::unix::fs::symlink(home.join(".agents"), t.path().join("p/link")).unwrap();
        let base: crate::core::Env = [("HOME".to_string(), home.display().to_string())]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let s = StorePaths::new(&base);
        let cwd = t.path().join("p");
        for p in [
            ".agents/env",
            "./.agents/local.env",
            "sub/../.agents",
            "link/env",
            "link",
        ] {
            assert!(s.covers(&cwd, p), "{p}");
        }
        assert!(s.covers(
            &cwd,
            &home.join(".agents/.cache/env/x").display().to_string()
        ));
        for p in ["src/main.rs", "agents/env", ".agentsx/env", "/etc/passwd"] {
            assert!(!s.covers(&cwd, p), "{p}");
        }
    }
}
