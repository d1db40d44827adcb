#!/usr/bin/env bash
# The added cost of a wrapped agent command on a cache hit (BENCHMARKS.md,
# "A wrapped agent command": the target is at most 2 ms over the bare
# command). Usage:
#
#   cargo build --release && benches/agent_cmd.sh target/release/agentenv [OTHER_BINARY…]
#
# Each binary gets its own scratch directory (a user store with three
# sensitive variables and one public one, a fixed environment: the cache key
# covers the whole base environment, and hyperfine would add a variable of
# its own per run). A command runs the way Claude Code runs it: the text of
# $CLAUDE_ENV_FILE (written by `hook claude session-start`), then
# `eval 'CMD' && pwd -P >| FILE`; "wrapped" is CMD as the PreToolUse hook
# rewrote it. Needs bash, python3 and hyperfine; perf (optional) gives the
# CPU time of the whole process tree, the masking helper included (it
# outlives the shell by a moment, so hyperfine's user/system times, taken
# from wait4 of the shell, leave it out). A wrapped command goes through
# the masking daemon (one per user and binary, started by the first hook);
# WRAP=helper benchmarks the per-command helper instead
# (AGENTENV_NO_DAEMON=1, what a command falls back to); WRAP=portable
# the portable path (AGENTENV_PORTABLE=1, what a Mac runs: the helper,
# no memfd, no /dev/shm, no pipe sizing; docs/platforms.md). AGENT_SHELL=zsh
# runs the commands in zsh (Claude Code's shell when it is the user's
# $SHELL) instead of bash. REFS=1 makes two of the three sensitive values
# secret references (`from = "vault://secret/bench#…"`) to a local OpenBao
# dev server the script starts (`bao` on PATH, else
# $AGENTENV_TEST_VENV/bin/bao): a wrapped command then gets them from the
# value daemon.
set -euo pipefail
SH=${AGENT_SHELL:-bash}
[ $# -ge 1 ] || { echo "usage: $0 BINARY [BINARY…]" >&2; exit 2; }
RUNS=${RUNS:-300}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
refs_env=""
if [ -n "${REFS:-}" ]; then
  bao=$(command -v bao || echo "${AGENTENV_TEST_VENV:-.venv}/bin/bao")
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$bao" server -dev -dev-root-token-id=bench-root -dev-listen-address="127.0.0.1:$port" >"$root/bao.log" 2>&1 &
  baopid=$!
  trap 'kill $baopid 2>/dev/null; rm -rf "$root"' EXIT
  export BAO_ADDR="http://127.0.0.1:$port" BAO_TOKEN=bench-root
  for _ in $(seq 1 100); do "$bao" status >/dev/null 2>&1 && break; sleep 0.1; done
  "$bao" kv put secret/bench db=bench-password-42 npm=npm_bench_0000 >/dev/null
  refs_env="BAO_ADDR=$BAO_ADDR BAO_TOKEN=$BAO_TOKEN"
  unset BAO_ADDR BAO_TOKEN
fi
cmds=()
i=0
for b in "$@"; do
  B=$(realpath "$b"); W="$root/$i"; i=$((i + 1))
  mkdir -p "$W/home/.agents" "$W/proj"
  if [ -n "$refs_env" ]; then
    printf 'GH_TOKEN=ghp_bench_token_0123456789\nLOG_LEVEL=debug\n' >"$W/home/.agents/env"
    printf '[vars]\nLOG_LEVEL = { public = true }\nDB_PASSWORD = { from = "vault://secret/bench#db" }\nNPM_TOKEN = { from = "vault://secret/bench#npm" }\n' >"$W/home/.agents/agentenv.toml"
  else
    printf 'GH_TOKEN=ghp_bench_token_0123456789\nDB_PASSWORD=bench-password-42\nNPM_TOKEN=npm_bench_0000\nLOG_LEVEL=debug\n' >"$W/home/.agents/env"
    printf '[vars]\nLOG_LEVEL = { public = true }\n' >"$W/home/.agents/agentenv.toml"
  fi
  E="env -i HOME=$W/home PATH=/usr/bin:/bin TMPDIR=$W LANG=C.UTF-8 $refs_env"
  words=5
  if [ "${WRAP:-daemon}" = helper ]; then E="$E AGENTENV_NO_DAEMON=1"; words=4; fi
  if [ "${WRAP:-daemon}" = portable ]; then E="$E AGENTENV_PORTABLE=1"; words=4; fi
  (cd "$W/proj" && $E CLAUDE_ENV_FILE="$W/envfile.sh" "$B" hook claude session-start)
  for c in true 'seq 1 20000'; do
    n=${c%% *}
    python3 -c 'import json,sys; print(json.dumps({"tool_name":"Bash","tool_input":{"command":sys.argv[1]},"cwd":sys.argv[2]}))' "$c" "$W/proj" >"$W/ev-$n.json"
    (cd "$W/proj" && $E "$B" hook claude pre-tool-use <"$W/ev-$n.json" >/dev/null) # the miss
    # The first hook starts the masking daemon; a rewrite names it (a
    # fifth word) once it runs.
    for _ in $(seq 1 100); do
      r=$(cd "$W/proj" && $E "$B" hook claude pre-tool-use <"$W/ev-$n.json" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["hookSpecificOutput"]["updatedInput"]["command"])')
      first=${r%%$'\n'*}
      set -- $first
      [ $# -eq "$words" ] && break
      sleep 0.05
    done
    [ $# -eq "$words" ] || { echo "$b: the masking daemon did not start" >&2; exit 1; }
    q=${c//\'/\'\\\'\'}; rq=${r//\'/\'\\\'\'}
    { cat "$W/envfile.sh"; printf "eval '%s' && pwd -P >| %s/cwd\n" "$q" "$W"; } >"$W/bare-$n.sh"
    { cat "$W/envfile.sh"; printf "eval '%s' && pwd -P >| %s/cwd\n" "$rq" "$W"; } >"$W/wrap-$n.sh"
  done
  # A wrapped command must work before it is timed.
  out=$(cd "$W/proj" && $E "$SH" "$W/wrap-seq.sh" | tail -1)
  [ "$out" = 20000 ] || { echo "$b: the wrapped command did not run ($out)" >&2; exit 1; }
  if [ -n "$refs_env" ]; then
    # The referenced values reach a wrapped command (their lengths).
    python3 -c 'import json,sys; print(json.dumps({"tool_name":"Bash","tool_input":{"command":"echo ${#DB_PASSWORD}:${#NPM_TOKEN}"},"cwd":sys.argv[1]}))' "$W/proj" >"$W/ev-len.json"
    r=$(cd "$W/proj" && $E "$B" hook claude pre-tool-use <"$W/ev-len.json" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["hookSpecificOutput"]["updatedInput"]["command"])')
    out=$(cd "$W/proj" && { cat "$W/envfile.sh"; printf '%s\n' "$r"; } | $E "$SH" | tail -1)
    [ "$out" = 17:14 ] || { echo "$b: the referenced values did not reach the command ($out)" >&2; exit 1; }
  fi
  cmds+=("$W|$B|$E")
done
for c in "${cmds[@]}"; do
  IFS='|' read -r W B E <<<"$c"
  echo "== $B (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
  # -N: no shell in between; run from the project (the hook's cache key
  # covers it).
  (cd "$W/proj" && hyperfine -N --warmup 30 --min-runs "$RUNS" --export-markdown "$W/wall.md" \
    "$E $SH ../bare-true.sh" "$E $SH ../wrap-true.sh" \
    "$E $SH ../bare-seq.sh" "$E $SH ../wrap-seq.sh" >/dev/null)
  # The hook reads its event on stdin: through a shell (hyperfine takes
  # the shell's own start off).
  (cd "$W/proj" && hyperfine --warmup 30 --min-runs "$RUNS" --export-markdown "$W/hook.md" \
    "$E $B hook claude pre-tool-use < ../ev-true.json" "$E $B --version < ../ev-true.json" >/dev/null)
  sed -E "s#env -i ([^ ]+=[^ ]* )+##; s#$W/##g" "$W/wall.md"
  sed -E "s#env -i ([^ ]+=[^ ]* )+##; s#$W/##g" "$W/hook.md" | tail -n +3
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v perf >/dev/null 2>&1; then
  echo
  echo "CPU per command, ms: the shell's process tree (perf stat task-clock, a"
  echo "per-command helper included) + the masking daemon's share (its utime + stime"
  echo "over the runs, from /proc: 10 ms ticks):"
  for c in "${cmds[@]}"; do
    IFS='|' read -r W B E <<<"$c"
    dpid=$(pgrep -f -x "$B hook claude daemon" | head -1 || true)
    ticks() { [ -n "$dpid" ] && awk '{print $14 + $15}' "/proc/$dpid/stat" 2>/dev/null || echo 0; }
    hz=$(getconf CLK_TCK)
    for f in bare-true wrap-true bare-seq wrap-seq; do
      t0=$(ticks)
      ms=$(cd "$W/proj" && perf stat -x, -e task-clock bash -c \
        "for i in \$(seq 1 $RUNS); do $E $SH ../$f.sh >/dev/null; done" 2>&1 >/dev/null |
        awk -F, -v n="$RUNS" '/task-clock/ {printf "%.2f", $1 / n}')
      t1=$(ticks)
      d=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v n="$RUNS" 'BEGIN {printf "%.2f", (b - a) * 1000 / hz / n}')
      echo "$B $f $ms + daemon $d"
    done
    for f in "hook claude pre-tool-use" "--version"; do
      ms=$(cd "$W/proj" && perf stat -x, -e task-clock bash -c \
        "for i in \$(seq 1 $RUNS); do $E $B $f < ../ev-true.json >/dev/null; done" 2>&1 >/dev/null |
        awk -F, -v n="$RUNS" '/task-clock/ {printf "%.2f", $1 / n}')
      echo "$B $f $ms"
    done
  done
fi
