#!/usr/bin/env bash
# `agentenv audit` over generated transcripts against `grep -F -f` of the raw
# values on the same files, in one run (BENCHMARKS.md, "Audit").
#
#   benches/audit.sh [path/to/agentenv] [MIB]   (default: target/release/agentenv, 1024)
#
# Data: benches/audit_gen.py in $AUDIT_BENCH_DIR (default
# /tmp/agentenv-audit-bench; generated once, reused). Both tools read the
# same files from the page cache (a warm-up read first); each runs ROUNDS
# times (default 3), alternating, and the best wall time counts. grep runs
# in the C locale (its fastest) with -n, so it counts lines as audit does.
set -euo pipefail
B=$(realpath "${1:-target/release/agentenv}")
MIB=${2:-1024}
ROUNDS=${ROUNDS:-3}
D=${AUDIT_BENCH_DIR:-/tmp/agentenv-audit-bench}
HERE=$(dirname "$(realpath "$0")")
if [ ! -f "$D/planted.txt" ]; then
  rm -rf "$D"
  mkdir -p "$D"
  python3 "$HERE/audit_gen.py" "$D" "$MIB"
fi
T="$D/home/.claude/projects"
BYTES=$(du -sb "$T" | cut -f1)
FILES=$(find "$T" -type f | wc -l)
echo "== data: $((BYTES >> 20)) MiB in $FILES files; planted lines per form:"
sed 's/^/   /' "$D/planted.txt"
cat $(find "$T" -type f) >/dev/null # warm the page cache

export HOME="$D/home" AGENTS_SYSTEM_ROOT="$D/no-system" PATH=/usr/bin:/bin LANG=C.UTF-8
cd "$D"
now() { date +%s.%N; }
best_audit=999999 best_grep=999999
for r in $(seq "$ROUNDS"); do
  t0=$(now)
  set +e
  "$B" audit "$T" >"$D/audit.out"
  s=$?
  set -e
  t1=$(now)
  [ "$s" = 1 ] || { echo "audit exit $s (want 1: planted values)" >&2; exit 1; }
  t2=$(now)
  set +e
  LC_ALL=C grep -rFn -f "$D/values.txt" "$T" >"$D/grep.out"
  set -e
  t3=$(now)
  a=$(echo "$t1 - $t0" | bc -l)
  g=$(echo "$t3 - $t2" | bc -l)
  echo "round $r: audit ${a}s, grep ${g}s"
  best_audit=$(echo "if ($a < $best_audit) $a else $best_audit" | bc -l)
  best_grep=$(echo "if ($g < $best_grep) $g else $best_grep" | bc -l)
done
found_audit=$(grep -c '^/' "$D/audit.out" || true)
found_grep=$(wc -l <"$D/grep.out")
mib=$((BYTES >> 20))
printf '== best of %d (wall clock, %s cores)\n' "$ROUNDS" "$(nproc)"
printf 'audit: %.2f s = %.0f MiB/s, %d occurrences (every form)\n' "$best_audit" "$(echo "$mib / $best_audit" | bc -l)" "$found_audit"
printf 'grep -F -f: %.2f s = %.0f MiB/s, %d lines (raw values only)\n' "$best_grep" "$(echo "$mib / $best_grep" | bc -l)" "$found_grep"
printf 'audit throughput / grep throughput: %.2fx\n' "$(echo "$best_grep / $best_audit" | bc -l)"
tail -2 "$D/audit.out"
# CPU time of one run each (user + sys), for the machine-independent view.
/usr/bin/env time -f 'audit CPU: %U user + %S sys, max RSS %M KiB' "$B" audit "$T" >/dev/null 2>"$D/audit.time" || true
tail -1 "$D/audit.time"
LC_ALL=C /usr/bin/env time -f 'grep CPU: %U user + %S sys, max RSS %M KiB' grep -rFn -f "$D/values.txt" "$T" >/dev/null 2>"$D/grep.time" || true
tail -1 "$D/grep.time"
