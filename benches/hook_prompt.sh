#!/usr/bin/env bash
# The shell hook's cost per prompt and on entering a project, next to direnv
# and mise on an equivalent tree, in one run (BENCHMARKS.md, "Shell hook").
#
#   benches/hook_prompt.sh [path/to/agentenv]      (default: target/release/agentenv)
#
# Part 1 calls each tool's prompt function N times in one bash (what every
# prompt runs) and prints the time per call, with an empty loop as the
# floor. Part 2 times one load on entering with hyperfine -N.
set -euo pipefail
B=$(realpath "${1:-target/release/agentenv}")
N_FAST=${N_FAST:-20000}
N_SLOW=${N_SLOW:-300}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/home/.agents" "$W/home/p/.agents" "$W/state" "$W/config" "$W/cache" "$W/data"
printf 'A=1\nB="two words"\nC=3\n' >"$W/home/p/.agents/env"
printf 'export A=1\nexport B="two words"\nexport C=3\n' >"$W/home/p/.envrc"
printf '[env]\nA = "1"\nB = "two words"\nC = "3"\n' >"$W/home/p/mise.toml"
export HOME="$W/home" XDG_STATE_HOME="$W/state" XDG_CONFIG_HOME="$W/config" \
  XDG_CACHE_HOME="$W/cache" XDG_DATA_HOME="$W/data" AGENTS_SYSTEM_ROOT="$W/no-system" \
  PATH=/usr/bin:/bin LANG=C.UTF-8
cd "$W/home/p"
"$B" allow . 2>/dev/null
direnv allow . 2>/dev/null
mise trust -q "$W/home/p/mise.toml" 2>/dev/null || mise trust "$W/home/p/mise.toml" 2>/dev/null

echo "== per prompt, nothing changed (bash $BASH_VERSION; µs per call)"
per_call() { # tool N
  env B="$B" TOOL="$1" N="$2" bash --norc --noprofile -c '
    case $TOOL in
      none) f=: ;;
      agentenv) eval "$("$B" hook bash)"; f=_agentenv_hook ;;
      direnv) eval "$(direnv hook bash)"; f=_direnv_hook ;;
      mise) eval "$(mise activate bash)"; f=_mise_hook ;;
    esac
    $f >/dev/null 2>&1; $f >/dev/null 2>&1   # the load on entering, then settle
    [ "$TOOL" = none ] || [ "${A-}" = 1 ] || { echo "$TOOL did not load" >&2; exit 1; }
    t0=$EPOCHREALTIME
    for ((i = 0; i < N; i++)); do $f; done
    t1=$EPOCHREALTIME
    echo "$TOOL $(( (${t1/./} - ${t0/./}) / N ))"'
}
{
  per_call none "$N_FAST"
  per_call agentenv "$N_FAST"
  per_call direnv "$N_SLOW"
  per_call mise "$N_SLOW"
} | tee "$W/prompt.txt"

echo "== entering the project: one load, from the same bash (µs per load)"
# _agentenv_reload = undo + one `agentenv hook bash --load` in $(...), the
# work of a prompt after `cd` into the project (warm cache after the first);
# the floor is the same command substitution around /bin/true. (hyperfine
# cannot time this: it exports HYPERFINE_ITERATION, a new base env per run,
# and the cache key covers the whole base env.)
per_load() { # what N
  env B="$B" WHAT="$1" N="$2" bash --norc --noprofile -c '
    eval "$("$B" hook bash)"
    case $WHAT in
      true) f() { _x=$(/bin/true); } ;;
      cached) f=_agentenv_reload; f() { _agentenv_reload; } ;;
      uncached) export AGENTENV_HOOK_CACHE=0; f() { _agentenv_reload; } ;;
    esac
    f; f
    t0=$EPOCHREALTIME
    for ((i = 0; i < N; i++)); do f; done
    t1=$EPOCHREALTIME
    echo "$WHAT $(( (${t1/./} - ${t0/./}) / N ))"'
}
{
  per_load true 300
  per_load cached 300
  per_load uncached 300
} | tee "$W/enter.txt"
