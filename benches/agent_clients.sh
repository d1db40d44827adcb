#!/bin/bash
# What Gemini CLI, OpenCode and Copilot CLI add to each shell command
# (docs/agents.md, BENCHMARKS.md#gemini-cli-opencode-copilot-cli), on a
# cache hit: each hook process the client starts, and the rewritten
# command through the helper (Gemini CLI and OpenCode: their command output
# is a socket the daemon cannot reopen) and through the daemon (Copilot
# CLI), next to the bare `bash -c true`.
#
#   cargo build --release
#   benches/agent_clients.sh target/release/agentenv      # RUNS=100 by default
set -eu
B=$(realpath "${1:?usage: benches/agent_clients.sh AGENTENV}")
RUNS=${RUNS:-100}
W=$(mktemp -d)
trap 'kill "$(cat "$W"/run/agentenv-wrap-*/pid 2>/dev/null)" 2>/dev/null; rm -rf "$W"' EXIT
mkdir -p "$W/home/.agents" "$W/proj" "$W/run"
chmod 700 "$W/run"
printf 'GH_TOKEN=zqCANARY_tok_5e8f1a2b9c\nDB_PASSWORD=zqCANARYpw12345\nLOG_LEVEL=debug\n' >"$W/home/.agents/env"
printf '[vars]\nLOG_LEVEL = { public = true }\n' >"$W/home/.agents/agentenv.toml"
cd "$W/proj"
ev() { printf '{"tool_name":"%s","tool_input":{"command":"true"},"cwd":"%s"}' "$1" "$PWD"; }
ev run_shell_command >../gemini.json
ev bash >../bash.json
printf '{"tool_name":"read_file","tool_input":{"file_path":"x"},"tool_response":{"llmContent":"%s"}}' \
  "$(head -c 3000 /dev/zero | tr '\0' a)" >../after.json
E="env -i HOME=$W/home XDG_RUNTIME_DIR=$W/run PATH=/usr/bin:/bin"
command_of() { # the rewritten command the hook answers with
  $E ${3:-} "$B" hook "$1" pre-tool-use <"../$2" | python3 -c \
    'import json,sys; v=json.load(sys.stdin); print((v.get("hookSpecificOutput",{}).get("tool_input") or v.get("modifiedArgs") or v.get("args"))["command"])'
}
command_of copilot bash.json >/dev/null # starts the daemon
sleep 1
command_of gemini gemini.json AGENTENV_NO_DAEMON=1 >../helper.sh
command_of copilot bash.json >../daemon.sh
hyperfine -N -w 5 -r "$RUNS" \
  -n 'bash -c true' "$E bash -c true" \
  -n 'hook gemini pre-tool-use' "$E bash -c '\"$B\" hook gemini pre-tool-use <../gemini.json >/dev/null'" \
  -n 'hook gemini after-tool (3 kB)' "$E bash -c '\"$B\" hook gemini after-tool <../after.json'" \
  -n 'hook copilot pre-tool-use' "$E bash -c '\"$B\" hook copilot pre-tool-use <../bash.json >/dev/null'" \
  -n 'hook opencode pre-tool-use' "$E bash -c '\"$B\" hook opencode pre-tool-use <../bash.json >/dev/null'" \
  -n 'hook opencode shell-env' "$E bash -c '\"$B\" hook opencode shell-env >/dev/null'" \
  -n 'rewritten true, helper' "$E bash ../helper.sh" \
  -n 'rewritten true, daemon' "$E bash ../daemon.sh"
