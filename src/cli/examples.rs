//! The "Examples" section that ends each command's `--help` (and its man
//! page). Each example is a real command line, with a `# …` line above it
//! saying what it does; `tests/it/examples.rs` runs every one that can run on
//! a test machine. Keep lines under 80 columns; a line ending in `\`
//! continues on the next.

/// Build an examples section: a heading styled like clap's own, then the
/// lines, indented by two spaces.
macro_rules! examples {
    ($($line:literal)*) => {
        concat!("\x1b[1m\x1b[4mExamples:\x1b[0m\n", $("  ", $line, "\n",)*)
    };
}

/// `text` (a command's own after-help prose), then its examples.
pub fn after(text: &str, examples: &str) -> String {
    format!("{}\n\n{examples}", text.trim_end())
}

pub const AGENTENV: &str = examples!(
    "# Load what the agent stores add into this shell"
    "eval \"$(agentenv env --diff)\""
    "# Follow cd: load each allowed project's .agents (in ~/.bashrc)"
    "eval \"$(agentenv hook bash)\""
    "# Where PATH's entries came from"
    "agentenv explain PATH"
    "# Install the man pages"
    "agentenv man --dir ~/.local/share/man/man1"
);

pub const ENV: &str = examples!(
    "# Load what the stores add into this shell"
    "eval \"$(agentenv env --diff)\""
    "# A GitHub Actions step (values registered with the runner's masker)"
    "agentenv env --diff --format github --append \"$GITHUB_ENV\""
    "# What an agent may see: the public variables only (agentenv.toml)"
    "agentenv env --diff --public-only --format dotenv"
    "# Every variable of the result, as JSON"
    "agentenv env --format json"
);

pub const EXEC: &str = examples!(
    "# Start Claude Code with its identity stamped"
    "agentenv exec --agent claude -- claude"
    "# Run one command with the user store only"
    "agentenv exec -g -- printenv PATH"
    "# Run the tests in the session environment"
    "agentenv exec -- make test"
    "# The secrets masked in what the command prints"
    "agentenv exec --redact -- env"
);

pub const REDACT: &str = examples!(
    "# Mask the stores' secrets in a command's output"
    "env | agentenv redact"
    "# The same masks, user store only, on a file"
    "agentenv redact -g < /etc/hostname"
);

pub const EXPLAIN: &str = examples!(
    "# Every variable the stores change, layer by layer"
    "agentenv explain"
    "# Two variables, as JSON"
    "agentenv explain --format json PATH PYTHONPATH"
);

pub const LAUNCH: &str = examples!(
    "# In a pack's mcp/launch.sh: the pack root is the parent of mcp/"
    "exec agentenv launch --plugin-root \"$(dirname \"$0\")/..\" \\"
    "  --manifest-env \"$(dirname \"$0\")/env.json\" -- node server.js"
    "# Read no .env file; write the report of what was applied"
    "agentenv launch --no-env --report launch.json -- node server.js"
    "# Compare names as on Windows"
    "agentenv launch --platform win32 -- node server.js"
);

pub const HARNESS: &str = examples!(
    "# The resolved environment as JSON, for a GitLab runner"
    "agentenv harness resolve harness/review.yaml --forge gitlab"
    "# Check a harness file"
    "agentenv harness lint harness/review.yaml"
    "# Run the agent with the runner environment"
    "agentenv harness run harness/review.yaml -- printenv REVIEW_MODE"
);

pub const HARNESS_RESOLVE: &str = examples!(
    "# The resolved environment as JSON"
    "agentenv harness resolve harness/review.yaml"
    "# With an event for the CEL guards, on GitHub"
    "agentenv harness resolve harness/review.yaml --event event.json --forge github"
);

pub const HARNESS_LINT: &str = examples!(
    "# Diagnostics; exit 1 only on errors"
    "agentenv harness lint harness/review.yaml"
    "# With the dotenv file the runner loads first"
    "agentenv harness lint --env-file .env harness/review.yaml"
);

pub const HARNESS_RUN: &str = examples!(
    "# Run a command with the effective runner environment"
    "agentenv harness run harness/review.yaml -- printenv REVIEW_MODE"
    "# With a dotenv file loaded first"
    "agentenv harness run --env-file .env harness/review.yaml -- make review"
);

pub const HARNESS_EXPLAIN: &str = examples!(
    "# Where each variable was set"
    "agentenv harness explain harness/review.yaml"
    "# One variable, as JSON"
    "agentenv harness explain --format json harness/review.yaml REVIEW_MODE"
);

pub const HARNESS_SANDBOX_ENV: &str = examples!(
    "# The sandbox's export lines into a file"
    "agentenv harness sandbox-env harness/review.yaml -o sandbox.env"
    "# As dotenv, on stdout"
    "agentenv harness sandbox-env --format dotenv harness/review.yaml"
);

pub const DOTENV: &str = examples!(
    "# Find ignored lines, unterminated quotes and duplicates"
    "agentenv dotenv check .env .env.local"
    "# The variables as export lines (later files win)"
    "agentenv dotenv parse .env .env.local --format export"
);

pub const DOTENV_PARSE: &str = examples!(
    "# The variables as JSON"
    "agentenv dotenv parse .env"
    "# As export lines, later files winning"
    "agentenv dotenv parse .env .env.local --format export"
);

pub const DOTENV_CHECK: &str = examples!(
    "# Report problems; exit 1 when there are any"
    "agentenv dotenv check .env"
    "agentenv dotenv check .env .env.local"
);

pub const COMPLETIONS: &str = examples!(
    "agentenv completions bash \\"
    "  > ~/.local/share/bash-completion/completions/agentenv"
    "agentenv completions zsh > ~/.zfunc/_agentenv"
    "agentenv completions fish > ~/.config/fish/completions/agentenv.fish"
    "# PowerShell: add to $PROFILE"
    "agentenv completions powershell | Out-String | Invoke-Expression"
);

/// What `hook --help` says before its examples.
pub const HOOK_TEXT: &str = "\
At each prompt where the directory or a file of the last load changed, the
hook undoes the last load and loads the stores for the current directory.
Your own stores (~/.agents, the system store) always load. A project's
.agents is code from its repository: it loads only after `agentenv allow`
recorded it, and only while it stays as it was then (the hook says once
when it is not allowed, or changed since); `agentenv deny` forgets it.
`agentenv status` shows what would load here and why.

When a load changes your variables, the hook prints one line on stderr,
names only, never values: `agentenv: +FOO -BAR ~PATH` (+ set, - removed,
~ changed; nothing when nothing changed). AGENTENV_HOOK_QUIET=1 turns it off.

SHELL is bash, zsh or fish. (`hook claude|codex EVENT` are the agent hooks
that `agentenv init` installs.)";

pub const HOOK: &str = examples!(
    "# In ~/.bashrc"
    "eval \"$(agentenv hook bash)\""
    "# In ~/.zshrc"
    "eval \"$(agentenv hook zsh)\""
    "# In ~/.config/fish/config.fish"
    "agentenv hook fish | source"
);

pub const ALLOW: &str = examples!(
    "# Allow the project around the current directory"
    "agentenv allow"
    "# Allow a project by its directory"
    "agentenv allow ~/src/project"
);

pub const DENY: &str = examples!(
    "# Forget the project around the current directory"
    "agentenv deny"
    "agentenv deny ~/src/project"
);

/// What `init --help` and `init claude --help` say before their examples.
pub const INIT_TEXT: &str = "\
init claude adds to Claude Code's settings.json, and changes nothing else:
- a SessionStart hook: the session gets the public variables only (those
  an agentenv.toml declares public); a project store loads once allowed;
- a PreToolUse hook on Bash: each command runs with the sensitive
  variables set for it alone, its stdout and stderr masked; on the file
  tools (Read, Edit, Grep, ...): a path inside a store is refused;
- deny rules: Read and Edit of ~/.agents/** and ./.agents/**;
- one allow rule, Bash(__agentenv_begin:*): the form the hook rewrites each
  command into. Claude Code checks your permission rules against the
  command as the agent wrote it, before the rewrite, so this rule lets
  only the rewritten form through and approves nothing your rules would
  not.
init codex adds the same hooks to Codex's hooks.json (Codex has no
file-tool rules); Codex runs them once you trust them (/hooks).";

pub const INIT: &str = examples!(
    "# Wire Claude Code (~/.claude/settings.json)"
    "agentenv init claude"
    "# Show the project's settings file with the hook, write nothing"
    "agentenv init claude --project . --dry-run"
);

pub const INIT_CLAUDE: &str = examples!(
    "# Wire ~/.claude/settings.json: public variables in the session, secrets per command"
    "agentenv init claude"
    "# To the project's .claude/settings.json, shown first"
    "agentenv init claude --project . --dry-run"
    "# Take agentenv's hooks and deny rules out again"
    "agentenv init claude --remove"
);

pub const INIT_CODEX: &str = examples!(
    "# Wire ~/.codex/hooks.json"
    "agentenv init codex"
    "# Show it first"
    "agentenv init codex --dry-run"
);

pub const INIT_GEMINI: &str = examples!(
    "# Wire ~/.gemini/settings.json (BeforeTool and AfterTool hooks)"
    "agentenv init gemini"
    "# This project's .gemini/settings.json, shown first"
    "agentenv init gemini --project . --dry-run"
);

pub const INIT_OPENCODE: &str = examples!(
    "# Write ~/.config/opencode/plugins/agentenv.js"
    "agentenv init opencode"
    "# Take it out again"
    "agentenv init opencode --remove"
);

pub const INIT_COPILOT: &str = examples!(
    "# Write ~/.copilot/hooks/agentenv.json"
    "agentenv init copilot"
    "# This repository's .github/hooks/agentenv.json"
    "agentenv init copilot --project ."
);

pub const STATUS: &str = examples!(
    "# What env would walk here: root, stores, trust, files, cache"
    "agentenv status"
    "# Another project, as JSON"
    "agentenv status ~/src/project --format json"
);

pub const AUDIT: &str = examples!(
    "# Search the agents' transcripts and the shell histories"
    "agentenv audit"
    "# Redact what it finds in place (then rotate those values)"
    "agentenv audit --fix"
    "# One directory, as JSON, with every store's values"
    "agentenv audit --all-stores --format json ~/.claude/projects"
);

pub const MCP: &str = examples!(
    "# Which MCP configurations hold a key in plain text"
    "agentenv mcp scan"
    "# See what migrate would change, then do it"
    "agentenv mcp migrate --dry-run"
    "agentenv mcp migrate"
);

pub const MCP_SCAN: &str = examples!(
    "# Every client's configurations, user and this project"
    "agentenv mcp scan"
    "# Another project, as JSON"
    "agentenv mcp scan --project ~/src/project --format json"
);

pub const MCP_MIGRATE: &str = examples!(
    "# The diff, values masked; nothing changes"
    "agentenv mcp migrate --dry-run"
    "# Move the values into the user store (~/.agents/env)"
    "agentenv mcp migrate"
    "# Into a project's .agents/local.env instead"
    "agentenv mcp migrate --project ~/src/project"
);

pub const SET: &str = examples!(
    "# Type this project's GH_TOKEN into .agents/local.env (asked twice)"
    "agentenv set GH_TOKEN"
    "# A key for every project, in the user store's env file"
    "agentenv set OPENAI_API_KEY --user"
);

pub const MAN: &str = examples!(
    "# Read the page of every command"
    "agentenv man | man -l -"
    "# Install one page per command"
    "agentenv man --dir ~/.local/share/man/man1"
);
