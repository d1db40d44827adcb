#!/bin/sh
# benches/harness_resolve.sh [BIN] — issue 11's harness benchmark: `resolve`
# of a 3-level base chain + forge block + 5 overlays against `--version`.
# hA.yaml is h.yaml with a CEL comment after each guard, which sends the
# guards to the `cel` crate's ANTLR parser (the path every guard took
# before the Pratt fast path; see src/harness/cel.rs).
set -eu
B=${1:-target/release/agentenv}
B=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
cd "$D"
mkdir -p fs/harness
cat > fs/harness/l3.yaml <<'EOF'
agent: agents/a.md
role: bench
env:
  runner: {A3: a3, SHARED: l3}
  sandbox: {S3: "${HOME}"}
host_files:
  - {src: "${FULLSEND_DIR}/x", dest: /sandbox/workspace/.env.d/x.env}
EOF
cat > fs/harness/l2.yaml <<'EOF'
base: l3.yaml
env:
  runner: {A2: a2, SHARED: l2}
validation_loop: {script: v.sh, schema: "${FULLSEND_DIR}/s.json"}
EOF
cat > fs/harness/l1.yaml <<'EOF'
base: l2.yaml
env:
  sandbox: {S1: s1}
forge:
  github:
    env: {runner: {F: gh}}
  gitlab:
    env: {runner: {F: gl}}
EOF
head='base: l1.yaml
env:
  runner: {TOP: top}
'
# $2: appended to each guard (a CEL comment sends it to the ANTLR parser).
ov() { printf "  - when: \"has(event.labels) && 'l%s' in event.labels || runtime.forge == 'github' && %s %% 2 == 0%s\"\n    env: {runner: {O%s: v%s}, sandbox: {OS%s: '\${HOME}'}}\n" "$1" "$1" "${2:-}" "$1" "$1" "$1"; }
printf '%s' "$head" > fs/harness/h0.yaml
{ printf '%soverlays:\n' "$head"; ov 0; } > fs/harness/h1.yaml
{ printf '%soverlays:\n' "$head"; for i in 0 1 2 3 4; do ov $i; done; } > fs/harness/h.yaml
{ printf '%soverlays:\n' "$head"; for i in 0 1 2 3 4; do ov $i ' // antlr'; done; } > fs/harness/hA.yaml
echo '{"labels": ["l1", "l3"]}' > ev.json
# The same resolution with either parser.
"$B" harness resolve fs/harness/h.yaml --forge github --event ev.json > h.json
"$B" harness resolve fs/harness/hA.yaml --forge github --event ev.json > hA.json
cmp h.json hA.json
hyperfine -N --warmup 50 --min-runs 1000 'true' "$B --version" \
  "$B harness resolve fs/harness/h0.yaml --forge github" \
  "$B harness resolve fs/harness/h1.yaml --forge github --event ev.json" \
  "$B harness resolve fs/harness/h.yaml --forge github --event ev.json" \
  "$B harness resolve fs/harness/hA.yaml --forge github --event ev.json"
