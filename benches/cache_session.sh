#!/bin/bash
# How often env.py runs when the shell hook re-enters a project from
# another directory, and when Claude Code starts sessions, each with its own
# CLAUDE_ENV_FILE (BENCHMARKS.md, "The cache key and per-session variables").
# Usage: benches/cache_session.sh [AGENTENV_BINARY] (default: target/release/agentenv)
set -eu
B=$(realpath "${1:-target/release/agentenv}")
W=$(mktemp -d /tmp/agentenv-cache-session.XXXXXX)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/home/.agents" "$W/proj/.agents" "$W/other"
count='import json, os
open(os.environ["HOME"] + "/%s-runs", "a").write("x")
print(json.dumps({"%s": "1"}))
'
printf "$count" user U > "$W/home/.agents/env.py"
printf "$count" project P > "$W/proj/.agents/env.py"
runs() { [ -f "$W/home/$1-runs" ] && wc -c < "$W/home/$1-runs" || echo 0; }
E=(env -i "HOME=$W/home" "PATH=$(dirname "$B"):/usr/bin:/bin" AGENTS_PYTHON=/usr/bin/python3 TERM=dumb)
(cd "$W/proj" && "${E[@]}" "$B" allow -q)
# The shell hook: enter the project 5 times, each time from another directory.
t0=$(date +%s%N)
"${E[@]}" bash --norc --noprofile -c '
eval "$(agentenv hook bash)"
for d in /tmp "$1/other" / /usr "$1/home"; do
  cd "$d"; eval "$PROMPT_COMMAND"; cd "$1/proj"; eval "$PROMPT_COMMAND"
done' bash "$W" 2>/dev/null
t1=$(date +%s%N)
echo "hook: the project's env.py ran $(runs project) times for 5 entries ($(( (t1 - t0) / 10000000 )) ms per entry and exit)"
rm -f "$W"/home/*-runs
# Claude Code: 5 session starts, each with a new CLAUDE_ENV_FILE and SHLVL.
t0=$(date +%s%N)
for i in 1 2 3 4 5; do
  f=$(mktemp "$W/claude-env.XXXXXX")
  echo '{"session_id":"s'$i'","hook_event_name":"SessionStart"}' |
    (cd "$W/proj" && "${E[@]}" CLAUDE_ENV_FILE="$f" CLAUDE_PROJECT_DIR="$W/proj" SHLVL=$((i + 1)) \
      "$B" hook claude session-start)
done
t1=$(date +%s%N)
echo "claude: the user's env.py ran $(runs user) times, the project's $(runs project) times for 5 session starts ($(( (t1 - t0) / 5000000 )) ms per start)"
