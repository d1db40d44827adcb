#!/usr/bin/env bash
# `agentenv mcp scan` over a home with every client's MCP configurations
# (BENCHMARKS.md#mcp-scan): it runs in a pre-commit hook, target < 50 ms.
#
# The home: a user store with 20 sensitive values; ~/.claude.json with
# PROJECTS projects (default 300, each with history and two MCP servers —
# about 1 MB, what a year of Claude Code leaves), Codex's config.toml,
# Gemini's, Cursor's, VS Code's and OpenCode's user and project files, 8
# servers each, a planted token in one server per file. Compared in the same
# hyperfine run with `agentenv --version` (process start) and `agentenv
# env` (the same session assembly, without the scan).
#
# Needs hyperfine and python3. Usage: benches/mcp_scan.sh [PROJECTS]
set -euo pipefail

projects=${1:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${AGENTENV_BIN:-$root/target/release/agentenv}
if [ ! -x "$bin" ]; then
  cargo build --release --manifest-path "$root/Cargo.toml"
fi
w=$(mktemp -d "${TMPDIR:-/tmp}/mcp-scan-bench.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$w"' EXIT

python3 - "$w" "$projects" <<'EOF'
import json, os, sys
w, n = sys.argv[1], int(sys.argv[2])
home, proj = f"{w}/home", f"{w}/home/src/app"
for d in [".agents", ".codex", ".gemini", ".cursor", ".config/Code/User",
          ".config/opencode"]:
    os.makedirs(f"{home}/{d}", exist_ok=True)
for d in [".git", ".gemini", ".cursor", ".vscode", ".codex"]:
    os.makedirs(f"{proj}/{d}", exist_ok=True)
with open(f"{home}/.agents/env", "w") as f:
    for i in range(20):
        f.write(f"SECRET_{i}=zqBenchValue-{i:04d}-abcdefghijkl\n")

def servers(tag, planted):
    s = {}
    for i in range(8):
        env = {"LOG_LEVEL": "info", "API_TOKEN": "${API_TOKEN}", "PORT": "3000"}
        if planted and i == 3:
            env["GITHUB_PERSONAL_ACCESS_TOKEN"] = "ghp_zq0123456789abcdefghijABCDEFGHIJ0123"
        s[f"{tag}{i}"] = {"command": "npx", "args": ["-y", f"@org/server-{i}", "--port", "3000"], "env": env}
    return s

claude = {"numStartups": 412, "mcpServers": servers("u", True), "projects": {}}
for p in range(n):
    claude["projects"][f"/home/me/src/p{p}"] = {
        "allowedTools": [],
        "history": [{"display": f"fix the tests in module {k} " * 4, "pastedContents": {}} for k in range(8)],
        "mcpServers": dict(list(servers(f"p{p}-", False).items())[:2]),
        "lastCost": 0.12, "lastTotalInputTokens": 12345,
    }
json.dump(claude, open(f"{home}/.claude.json", "w"), indent=2)
def toml(servers):
    out = ['model = "o3"\n']
    for k, v in servers.items():
        out.append(f'\n[mcp_servers.{k}]\ncommand = "npx"\nargs = {json.dumps(v["args"])}\n')
        out.append("env = { " + ", ".join(f'{a} = {json.dumps(b)}' for a, b in v["env"].items()) + " }\n")
    return "".join(out)
open(f"{home}/.codex/config.toml", "w").write(toml(servers("c", True)))
open(f"{proj}/.codex/config.toml", "w").write(toml(servers("pc", True)))
for path, key, tag in [
    (f"{home}/.gemini/settings.json", "mcpServers", "g"),
    (f"{proj}/.gemini/settings.json", "mcpServers", "pg"),
    (f"{home}/.cursor/mcp.json", "mcpServers", "cu"),
    (f"{proj}/.cursor/mcp.json", "mcpServers", "pcu"),
    (f"{home}/.config/Code/User/mcp.json", "servers", "v"),
    (f"{proj}/.vscode/mcp.json", "servers", "pv"),
    (f"{proj}/.mcp.json", "mcpServers", "pm"),
]:
    json.dump({key: servers(tag, True)}, open(path, "w"), indent=2)
for path, tag in [(f"{home}/.config/opencode/opencode.json", "o"), (f"{proj}/opencode.json", "po")]:
    oc = {k: {"type": "local", "command": [v["command"]] + v["args"], "environment": v["env"]}
          for k, v in servers(tag, True).items()}
    json.dump({"mcp": oc}, open(path, "w"), indent=2)
EOF

cd "$w/home/src/app"
export HOME="$w/home" PATH=/usr/bin:/bin
ls -l "$HOME/.claude.json" | awk '{print "~/.claude.json:", $5, "bytes"}'
"$bin" mcp scan | tail -1 || true
hyperfine -N --warmup 5 --min-runs 50 -i \
  "$bin --version" \
  "$bin env --format json" \
  "$bin mcp scan" \
  "$bin mcp scan --format json"
