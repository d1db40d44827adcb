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
    /// The settings directory in a project and in `$HOME`.
    pub settings_dir: &'static str,
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
    /// The hook events `init` wires: session start, before a tool.
    pub session_start_event: &'static str,
    pub pre_tool_use_event: &'static str,
    /// The shell tools: a command is rewritten.
    pub shell_tools: &'static [&'static str],
    /// The file tools whose input names a path: a store path is denied.
    pub file_tools: &'static [&'static str],
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

static CLAUDE: Facts = Facts {
    name: "claude",
    settings_dir: ".claude",
    settings_file: "settings.json",
    dir_var: "CLAUDE_CONFIG_DIR",
    transcripts: &["projects", "session-env", "history.jsonl"],
    env_file_var: "CLAUDE_ENV_FILE",
    env_file_optional: false,
    session_start_event: "SessionStart",
    pre_tool_use_event: "PreToolUse",
    shell_tools: &["Bash"],
    file_tools: CLAUDE_FILE_TOOLS,
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
    settings_file: "hooks.json",
    dir_var: "CODEX_HOME",
    transcripts: &["sessions", "history.jsonl"],
    env_file_var: "CODEX_ENV_FILE",
    env_file_optional: true,
    session_start_event: "SessionStart",
    pre_tool_use_event: "PreToolUse",
    shell_tools: CODEX_SHELL_TOOLS,
    file_tools: &[],
    patch_tools: &["apply_patch"],
    matcher_style: MatcherStyle::AnchoredRegex,
    functions: Functions::Prologue,
    allow_with_update: true,
    public_in_entry: true,
    deny_rules: &[],
    allow_rules: &[],
};

impl Client {
    /// Every client, in the order messages list them.
    pub const ALL: &'static [Client] = &[Client::Claude, Client::Codex];

    /// The client's row.
    pub fn facts(self) -> &'static Facts {
        match self {
            Client::Claude => &CLAUDE,
            Client::Codex => &CODEX,
        }
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
        if let Some(d) = get(f.dir_var) {
            return Some(cwd.join(d));
        }
        get("HOME").map(|h| Path::new(h).join(f.settings_dir))
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
    }

    #[test]
    fn every_client_parses_by_its_name() {
        for &c in Client::ALL {
            assert_eq!(Client::parse(c.name()), Some(c));
        }
        assert_eq!(Client::parse("fish"), None);
    }
}
