#!/usr/bin/env bash
# Whole-process masking throughput (BENCHMARKS.md), in one run:
#   agentenv exec --redact -- cat DATA | wc -c      (every form of 20 values)
#   agentenv exec -- cat DATA | wc -c               (no masking: the target is <= 3x)
#   dotenvx run --redact, varlock run, fnox exec --redact on the same data
#   and the same 20 values (exact strings only; targets: >= 20x dotenvx and
#   varlock, >= fnox)
#
# DATA is SIZE_MIB (default 256) MiB of log lines, one line in 100 holding
# one of the values. Each tool is first checked to really mask (a tool that
# prints a value is reported, not timed).
#
# Needs hyperfine and python3. Peers are used when found:
#   PEERS_DIR (default /tmp/peers) with node_modules/.bin/{dotenvx,varlock}
#     (npm install @dotenvx/dotenvx varlock)
#   FNOX (default: fnox on PATH)  (cargo install fnox)
# Usage: benches/redact.sh [SIZE_MIB]
set -euo pipefail

size_mib=${1:-${SIZE_MIB:-256}}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${AGENTENV_BIN:-$root/target/release/agentenv}
if [ ! -x "$bin" ]; then
  cargo build --release --manifest-path "$root/Cargo.toml"
fi
peers=${PEERS_DIR:-/tmp/peers}
fnox=${FNOX:-$(command -v fnox || true)}
runs=${RUNS:-5}
peer_runs=${PEER_RUNS:-2}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.agents" "$work/proj" "$work/peer"

python3 - "$work" "$size_mib" <<'PY'
import random, sys, os
work, size = sys.argv[1], int(sys.argv[2]) << 20
rnd = random.Random(14)
alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
secrets = [("SECRET_%02d" % i, "tok%d_" % i + "".join(rnd.choice(alpha) for _ in range(36)))
           for i in range(20)]
with open(os.path.join(work, "home/.agents/env"), "w") as f:
    for k, v in secrets:
        f.write("%s='%s'\n" % (k, v))
with open(os.path.join(work, "peer/.env"), "w") as f:
    for k, v in secrets:
        f.write('%s="%s"\n' % (k, v))
with open(os.path.join(work, "peer/.env.schema"), "w") as f:
    f.write("# @defaultSensitive=true\n# ---\n")
    for k, _ in secrets:
        f.write("# @sensitive\n%s=\n" % k)
with open(os.path.join(work, "peer/fnox.toml"), "w") as f:
    f.write("[secrets]\n")
    for k, v in secrets:
        f.write('%s = { default = "%s" }\n' % (k, v))
with open(os.path.join(work, "secrets.txt"), "w") as f:
    for _, v in secrets:
        f.write(v + "\n")
words = ["INFO", "request", "GET", "/api/v1/items", "200", "took", "12ms", "user=alice",
         "cache", "miss", "compiling", "crate", "test", "ok", "warning:", "unused"]
block = []
n = 0
for i in range(4000):
    line = " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 14)))
    if i % 100 == 99:
        line += " token=" + secrets[n % 20][1]
        n += 1
    block.append(line + "\n")
block = "".join(block).encode()
with open(os.path.join(work, "data"), "wb") as f:
    written = 0
    while written < size:
        chunk = block[: size - written]
        f.write(chunk)
        written += len(chunk)
# A small sample for the correctness check.
with open(os.path.join(work, "sample"), "wb") as f:
    f.write(block[:20000])
PY

data=$work/data
# Does CMD (run in DIR, with the sample as its argument) mask every value?
masks() {
  local dir=$1
  shift
  local out
  out=$(cd "$dir" && "$@" "$work/sample" 2>/dev/null | cat) || true
  if [ -z "$out" ]; then
    echo "no output"
    return 1
  fi
  if printf '%s' "$out" | grep -F -q -f "$work/secrets.txt"; then
    echo "prints a value"
    return 1
  fi
  echo "masks"
}

cmds=()
names=()
add() { names+=("$1"); cmds+=("$2"); }

check() {
  local what=$1 dir=$2
  shift 2
  printf '%-28s ' "$what:"
  masks "$dir" "$@"
}

echo "== $size_mib MiB, 20 sensitive values; reader: wc -c"
check "agentenv exec --redact" "$work/proj" env HOME="$work/home" AGENTS_SYSTEM_ROOT="$work/none" "$bin" exec --redact -- cat
add "agentenv exec -- cat" "cd $work/proj && HOME=$work/home AGENTS_SYSTEM_ROOT=$work/none $bin exec -- cat $data | wc -c"
add "agentenv exec --redact -- cat" "cd $work/proj && HOME=$work/home AGENTS_SYSTEM_ROOT=$work/none $bin exec --redact -- cat $data | wc -c"
add "cat (no wrapper)" "cat $data | wc -c"

peer_cmds=()
peer_names=()
padd() { peer_names+=("$1"); peer_cmds+=("$2"); }
if [ -x "$peers/node_modules/.bin/dotenvx" ]; then
  dx="$peers/node_modules/.bin/dotenvx"
  if check "dotenvx run --redact" "$work/peer" "$dx" run -q --redact -f .env -- cat >/dev/null; then
    padd "dotenvx $($dx --version) run --redact" "cd $work/peer && $dx run -q --redact -f .env -- cat $data 2>/dev/null | wc -c"
  else
    check "dotenvx run --redact" "$work/peer" "$dx" run -q --redact -f .env -- cat
  fi
else
  echo "dotenvx: not installed (npm install @dotenvx/dotenvx in $peers)"
fi
if [ -x "$peers/node_modules/.bin/varlock" ]; then
  vl="$peers/node_modules/.bin/varlock"
  if check "varlock run" "$work/peer" "$vl" run -- cat >/dev/null; then
    padd "varlock $($vl --version) run" "cd $work/peer && $vl run -- cat $data 2>/dev/null | wc -c"
  else
    check "varlock run" "$work/peer" "$vl" run -- cat
  fi
else
  echo "varlock: not installed (npm install varlock in $peers)"
fi
if [ -n "$fnox" ] && [ -x "$fnox" ]; then
  if check "fnox exec --redact" "$work/peer" "$fnox" exec --redact -- cat >/dev/null; then
    padd "fnox $($fnox --version | awk '{print $NF}') exec --redact" "cd $work/peer && $fnox exec --redact -- cat $data 2>/dev/null | wc -c"
  else
    check "fnox exec --redact" "$work/peer" "$fnox" exec --redact -- cat
  fi
else
  echo "fnox: not installed (cargo install fnox)"
fi

args=()
for i in "${!cmds[@]}"; do args+=(-n "${names[$i]}" "${cmds[$i]}"); done
hyperfine --warmup 1 --runs "$runs" --export-json "$work/ours.json" "${args[@]}"
jsons=("$work/ours.json")
if [ "${#peer_cmds[@]}" -gt 0 ]; then
  pargs=()
  for i in "${!peer_cmds[@]}"; do pargs+=(-n "${peer_names[$i]}" "${peer_cmds[$i]}"); done
  hyperfine --runs "$peer_runs" --export-json "$work/peers.json" "${pargs[@]}"
  jsons+=("$work/peers.json")
fi

python3 - "$size_mib" "${jsons[@]}" <<'PY'
import json, sys
size = int(sys.argv[1])
rows = []
for p in sys.argv[2:]:
    rows += json.load(open(p))["results"]
t = {r["command"]: r["median"] for r in rows}
ours = t["agentenv exec --redact -- cat"]
plain = t["agentenv exec -- cat"]
print()
print("| command | median s | MiB/s | vs `exec --redact` |")
print("| --- | ---: | ---: | ---: |")
for r in rows:
    m = r["median"]
    print("| `%s` | %.3f | %.0f | %.2f× |" % (r["command"], m, size / m, m / ours))
print()
print("exec --redact / exec: %.2f× the time (target <= 3×)" % (ours / plain))
for k, m in t.items():
    if k.startswith(("dotenvx", "varlock", "fnox")):
        print("%s / exec --redact: %.1f× the time (throughput ratio)" % (k, m / ours))
PY
