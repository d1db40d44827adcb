//! The clients agentenv wires, as one table: each row holds every fact
//! about one client that `init`, the hooks and `audit` read — its name,
//! settings file, hook events, tool names (from which the `PreToolUse`
//! matcher is built), env-file variable and permission rules. Adding a
//! client is a variant of [`Client`] and a row ([`Facts`]) in
//! [`Client::facts`]; what differs in behaviour is a field here, never a
//! `match` on the client elsewhere.

use std::path::{Path, PathBuf};

/// Which client's hook protocol (the `CLIENT` of `hook CLIENT EVENT` and
/// `init CLIENT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Claude,
    Codex,
    Gemini,
    OpenCode,
    Copilot,
}

/// The shape of the hook's answer (each client's documented fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// `hookSpecificOutput.updatedInput` / `permissionDecision: deny`
    /// (Claude Code, Codex).
    PreToolUse,
    /// Gemini CLI's BeforeTool: `hookSpecificOutput.tool_input` (merged
    /// over the model's arguments) / `decision: deny` with a `reason`.
    BeforeTool,
    /// agentenv's own OpenCode plugin: `{"args": …}` / `{"deny": reason}`
    /// (the plugin throws it).
    Plugin,
    /// Copilot CLI's preToolUse: `modifiedArgs` / `permissionDecision:
    /// deny` with `permissionDecisionReason`.
    ModifiedArgs,
}

/// What `init` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setup {
    /// agentenv's entries in the client's JSON settings file, every
    /// other byte kept.
    Settings,
    /// A file of agentenv's own, whole (OpenCode's plugin, a Copilot
    /// hooks file): `--remove` deletes it.
    OwnFile,
}

/// How the `PreToolUse` matcher is written: Claude Code takes a plain
/// alternation (`Bash|Read`), Codex a regular expression it anchors
/// itself only when told (`^(Bash|apply_patch)$`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatcherStyle {
    Alternation,
    AnchoredRegex,
}

/// How the shell functions of a rewritten command reach the agent's shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Functions {
    /// In the session env file the start hook writes (Claude Code pastes
    /// it before every command): the rewrite calls `__agentenv_begin`.
    EnvFile,
    /// A file under the user store's cache that the rewrite sources first
    /// (Codex: its env file is younger than its hooks).
    Prologue,
}

/// One client's row.
#[derive(Debug)]
pub struct Facts {
    /// The name on the command line (`hook claude …`, `init claude`).
    pub name: &'static str,
    /// The settings directory in a project (and in `$HOME`, unless
    /// `home_dir` says otherwise).
    pub settings_dir: &'static str,
    /// The user's settings directory below `$HOME` (`""`: `settings_dir`).
    pub home_dir: &'static str,
    /// Below `$DIR_VAR`, where the user's settings directory is (`""`:
    /// `$DIR_VAR` itself).
    pub dir_var_sub: &'static str,
    /// What `init` writes.
    pub setup: Setup,
    /// The settings file `init` edits, inside that directory.
    pub settings_file: &'static str,
    /// The variable that moves the user's settings directory.
    pub dir_var: &'static str,
    /// The files and directories below the settings directory that hold
    /// transcripts and histories (`audit`'s default places).
    pub transcripts: &'static [&'static str],
    /// The variable naming the session env file the start hook writes.
    pub env_file_var: &'static str,
    /// Whether a missing env-file variable is normal (an older client):
    /// the start hook then only says so at `-v`.
    pub env_file_optional: bool,
    /// The hook events `init` wires: session start, before a tool, after
    /// a tool (`""`: none).
    pub session_start_event: &'static str,
    pub pre_tool_use_event: &'static str,
    pub after_tool_event: &'static str,
    /// The shape of the pre-tool-use answer.
    pub answer: Answer,
    /// The shell tools: a command is rewritten.
    pub shell_tools: &'static [&'static str],
    /// The file tools whose input names a path: a store path is denied.
    pub file_tools: &'static [&'static str],
    /// The input keys of the file tools that name a path (a string or a
    /// list of them).
    pub path_keys: &'static [&'static str],
    /// The file tools whose `pattern` is a path pattern (a glob), not a
    /// regular expression.
    pub glob_tools: &'static [&'static str],
    /// The patch tools whose input is a patch naming files: a patch that
    /// touches a store is denied.
    pub patch_tools: &'static [&'static str],
    pub matcher_style: MatcherStyle,
    pub functions: Functions,
    /// Whether the client applies `updatedInput` only together with
    /// `"permissionDecision": "allow"` (Codex; there it is no approval).
    pub allow_with_update: bool,
    /// Whether the entry also carries the public `export` lines (a client
    /// whose env file may be missing gets them with each command).
    pub public_in_entry: bool,
    /// `permissions.deny` rules in the settings.
    pub deny_rules: &'static [&'static str],
    /// `permissions.allow` rules in the settings (the rewrite's one call).
    pub allow_rules: &'static [&'static str],
}

/// Claude Code's file tools.
const CLAUDE_FILE_TOOLS: &[&str] = &[
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

/// Codex's shell tool and its aliases (the hook payload names it `Bash`).
const CODEX_SHELL_TOOLS: &[&str] = &[
    "Bash",
    "shell",
    "exec_command",
    "local_shell",
    "unified_exec",
];

/// The input keys naming a path in Claude Code's file tools.
const CLAUDE_PATH_KEYS: &[&str] = &["file_path", "notebook_path", "path", "glob"];

static CLAUDE: Facts = Facts {
    name: "claude",
    settings_dir: ".claude",
    home_dir: "",
    dir_var_sub: "",
    setup: Setup::Settings,
    settings_file: "settings.json",
    dir_var: "CLAUDE_CONFIG_DIR",
    transcripts: &["projects", "session-env", "history.jsonl"],
    env_file_var: "CLAUDE_ENV_FILE",
    env_file_optional: false,
    session_start_event: "SessionStart",
    pre_tool_use_event: "PreToolUse",
    after_tool_event: "",
    answer: Answer::PreToolUse,
    shell_tools: &["Bash"],
    file_tools: CLAUDE_FILE_TOOLS,
    path_keys: CLAUDE_PATH_KEYS,
    glob_tools: &["Glob"],
    patch_tools: &[],
    matcher_style: MatcherStyle::Alternation,
    functions: Functions::EnvFile,
    allow_with_update: false,
    public_in_entry: false,
    deny_rules: &[
        "Read(~/.agents/**)",
        "Edit(~/.agents/**)",
        "Read(./.agents/**)",
        "Edit(./.agents/**)",
    ],
    allow_rules: &["Bash(__agentenv_begin:*)"],
};

static CODEX: Facts = Facts {
    name: "codex",
    settings_dir: ".codex",
    home_dir: "",
    dir_var_sub: "",
    setup: Setup::Settings,
    settings_file: "hooks.json",
    dir_var: "CODEX_HOME",
    transcripts: &["sessions", "history.jsonl"],
    env_file_var: "CODEX_ENV_FILE",
    env_file_optional: true,
    session_start_event: "SessionStart",
    pre_tool_use_event: "PreToolUse",
    after_tool_event: "",
    answer: Answer::PreToolUse,
    shell_tools: CODEX_SHELL_TOOLS,
    file_tools: &[],
    path_keys: &[],
    glob_tools: &[],
    patch_tools: &["apply_patch"],
    matcher_style: MatcherStyle::AnchoredRegex,
    functions: Functions::Prologue,
    allow_with_update: true,
    public_in_entry: true,
    deny_rules: &[],
    allow_rules: &[],
};

/// What the clients without a session env file share (Gemini CLI,
/// OpenCode, Copilot CLI): no start hook, so the rewrite sources the
/// functions (the prologue file); no permission rules; a glob tool named
/// `glob`. Each row below sets the rest.
const NO_ENV_FILE: Facts = Facts {
    name: "",
    settings_dir: "",
    home_dir: "",
    dir_var_sub: "",
    setup: Setup::Settings,
    settings_file: "",
    dir_var: "",
    transcripts: &[],
    env_file_var: "",
    env_file_optional: true,
    session_start_event: "",
    pre_tool_use_event: "",
    after_tool_event: "",
    answer: Answer::PreToolUse,
    shell_tools: &[],
    file_tools: &[],
    path_keys: &[],
    glob_tools: &["glob"],
    patch_tools: &[],
    matcher_style: MatcherStyle::Alternation,
    functions: Functions::Prologue,
    allow_with_update: false,
    public_in_entry: true,
    deny_rules: &[],
    allow_rules: &[],
};

/// Gemini CLI (docs/hooks/reference.md of its package): BeforeTool
/// rewrites the shell command and denies the file tools a store; AfterTool
/// (every tool) masks the result; the rewrite brings the public variables
/// too.
static GEMINI: Facts = Facts {
    name: "gemini",
    settings_dir: ".gemini",
    settings_file: "settings.json",
    transcripts: &["tmp"],
    pre_tool_use_event: "BeforeTool",
    after_tool_event: "AfterTool",
    answer: Answer::BeforeTool,
    shell_tools: &["run_shell_command"],
    file_tools: &[
        "read_file",
        "read_many_files",
        "write_file",
        "replace",
        "list_directory",
        "grep_search",
        "glob",
    ],
    path_keys: &[
        "file_path",
        "dir_path",
        "path",
        "include",
        "include_pattern",
    ],
    ..NO_ENV_FILE
};

/// OpenCode: a plugin file of agentenv's (`shell.env` gives each shell
/// call the public variables, so the entry holds the sensitive ones only;
/// `tool.execute.before` asks the hook).
static OPENCODE: Facts = Facts {
    name: "opencode",
    settings_dir: ".opencode/plugins",
    home_dir: ".config/opencode/plugins",
    dir_var_sub: "opencode/plugins",
    setup: Setup::OwnFile,
    settings_file: "agentenv.js",
    dir_var: "XDG_CONFIG_HOME",
    pre_tool_use_event: "tool.execute.before",
    answer: Answer::Plugin,
    shell_tools: &["bash"],
    file_tools: &[
        "read",
        "write",
        "edit",
        "multiedit",
        "patch",
        "list",
        "grep",
        "glob",
    ],
    path_keys: &["filePath", "path", "include"],
    public_in_entry: false,
    ..NO_ENV_FILE
};

/// GitHub Copilot CLI (its CLI hooks reference): a hooks file of
/// agentenv's with one preToolUse hook.
static COPILOT: Facts = Facts {
    name: "copilot",
    settings_dir: ".github/hooks",
    home_dir: ".copilot/hooks",
    dir_var_sub: "hooks",
    setup: Setup::OwnFile,
    settings_file: "agentenv.json",
    dir_var: "COPILOT_HOME",
    pre_tool_use_event: "preToolUse",
    answer: Answer::ModifiedArgs,
    shell_tools: &["bash"],
    file_tools: &["view", "create", "edit", "grep", "glob"],
    path_keys: &["path", "glob"],
    ..NO_ENV_FILE
};

impl Client {
    /// Every client, in the order messages list them.
    pub const ALL: &'static [Client] = &[
        Client::Claude,
        Client::Codex,
        Client::Gemini,
        Client::OpenCode,
        Client::Copilot,
    ];

    /// The client's row.
    pub fn facts(self) -> &'static Facts {
        match self {
            Client::Claude => &CLAUDE,
            Client::Codex => &CODEX,
            Client::Gemini => &GEMINI,
            Client::OpenCode => &OPENCODE,
            Client::Copilot => &COPILOT,
        }
    }

    /// The hook events `hook CLIENT EVENT` answers for this client.
    pub fn events(self) -> Vec<&'static str> {
        let f = self.facts();
        let mut v = vec!["pre-tool-use"];
        if !f.session_start_event.is_empty() {
            v.push("session-start");
        }
        if !f.after_tool_event.is_empty() {
            v.push("after-tool");
        }
        if f.answer == Answer::Plugin {
            v.push("shell-env");
        }
        v
    }

    pub fn parse(s: &str) -> Option<Client> {
        Client::ALL.iter().copied().find(|c| c.name() == s)
    }

    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// The `PreToolUse` matcher: the shell, file and patch tools.
    pub fn matcher(self) -> String {
        let f = self.facts();
        let tools: Vec<&str> = [f.shell_tools, f.file_tools, f.patch_tools].concat();
        match f.matcher_style {
            MatcherStyle::Alternation => tools.join("|"),
            MatcherStyle::AnchoredRegex => format!("^({})$", tools.join("|")),
        }
    }

    /// The user's settings directory: `$DIR_VAR` (a relative value taken
    /// from `cwd`, as the client would), else `~/SETTINGS_DIR`; `None`
    /// without either.
    pub fn user_dir(self, env: &crate::core::Env, cwd: &Path) -> Option<PathBuf> {
        let get = |k: &str| crate::core::get(env, k).filter(|v| !v.is_empty());
        let f = self.facts();
        if let Some(d) = get(f.dir_var).filter(|_| !f.dir_var.is_empty()) {
            return Some(cwd.join(d).join(f.dir_var_sub));
        }
        let home_dir = if f.home_dir.is_empty() {
            f.settings_dir
        } else {
            f.home_dir
        };
        get("HOME").map(|h| Path::new(h).join(home_dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matchers_are_the_tool_lists() {
        assert_eq!(
            Client::Claude.matcher(),
            "Bash|Read|Write|Edit|MultiEdit|NotebookEdit|NotebookRead|Grep|Glob|LS"
        );
        assert_eq!(
            Client::Codex.matcher(),
            "^(Bash|shell|exec_command|local_shell|unified_exec|apply_patch)$"
        );
        assert_eq!(
            Client::Gemini.matcher(),
            "run_shell_command|read_file|read_many_files|write_file|replace|list_directory|grep_search|glob"
        );
    }

    #[test]
    fn every_client_parses_by_its_name() {
        for &c in Client::ALL {
            assert_eq!(Client::parse(c.name()), Some(c));
        }
        assert_eq!(Client::parse("fish"), None);
    }
}
