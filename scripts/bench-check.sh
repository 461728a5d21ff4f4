#!/usr/bin/env bash
# End-to-end wall time and peak memory of `ellery check` (release build) on
# a generated list-append history of N transactions (default 1,000,000;
# 10 processes, about 4 micro-ops per transaction), and on huge-scc.edn.
# Also the 1M list-append and rw-register histories of the README's
# Performance table, each checked on 1 thread (ELLERY_THREADS=1: reading and
# the inference) and on the default (all cores): the 1 -> 2 thread speed-up. Prints the median of RUNS runs (the machine is
# shared and noisy), the verdict next to the figures, and the load average.
#
# With BASE=/path/to/an/older/ellery, the 1M list-append rows are measured
# for it too, alternating with this build's (an A/B on the same load).
#
# usage: [BASE=OLD-BINARY] scripts/bench-check.sh [N] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
runs=${2:-3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release
bin="$CARGO_TARGET_DIR/release/ellery"
hist="/tmp/ellery-bench-$n.edn"
[ -s "$hist" ] || "$bin" gen -n "$n" -p 10 -k 1000 --seed 1 > "$hist"
measure() {
  local label=$1; shift
  local times=() mems=() verdict out
  for _ in $(seq "$runs"); do
    out=$( { /usr/bin/time -f "%e %M" "$@" > /tmp/ellery-bench-verdict || true; } 2>&1 | tail -n 1)
    times+=("${out% *}"); mems+=("${out#* }")
  done
  verdict=$(cut -f 2 /tmp/ellery-bench-verdict | head -n 1)
  t=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  m=$(printf '%s\n' "${mems[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  printf '%-48s %-8s median %6.2f s  peak RSS %5d MB  (%d runs, load %s)\n' "$label" "$verdict" "$t" \
    $((m / 1024)) "$runs" "$(cut -d ' ' -f 1 /proc/loadavg)"
}
echo "history: $hist ($(stat -c %s "$hist") bytes)"
measure "check $n txns (strict-serializable)" "$bin" check --output summary "$hist"
measure "check $n txns (serializable)" "$bin" check -c serializable --output summary "$hist"
huge=../shared/corpus/elle/huge-scc.edn
if [ -f "$huge" ]; then
  measure "check huge-scc.edn" "$bin" check --output summary "$huge"
fi
for w in list-append rw-register; do
  h="/tmp/ellery-bench-$w-1m.edn"
  [ -s "$h" ] || "$bin" gen -w "$w" -n 1000000 --seed 1 > "$h"
  for threads in ELLERY_THREADS=1 -u; do
    label="all cores"; [ "$threads" = -u ] || label="1 thread"
    [ "$threads" = -u ] && threads="-u ELLERY_THREADS"
    # shellcheck disable=SC2086 # two words for env: -u NAME
    measure "check 1M $w, $label" env $threads "$bin" check -q --output summary "$h"
    if [ "$w" = list-append ] && [ -n "${BASE:-}" ]; then
      # shellcheck disable=SC2086
      measure "  base ($BASE), $label" env $threads "$BASE" check -q --output summary "$h"
    fi
  done
done
# Reading alone (the 1M rw-register history's bytes held in memory): one
# part on one thread vs two parts on two (issue 23's 600 MB/s on 2 cores).
cargo build --quiet --release --example read_throughput
for parts in 1 2; do
  printf 'read 1M rw-register, parts=%s: %s (load %s)\n' "$parts" \
    "$("$CARGO_TARGET_DIR/release/examples/read_throughput" /tmp/ellery-bench-rw-register-1m.edn "parts=$parts" "$runs" | tail -n 1)" \
    "$(cut -d ' ' -f 1 /proc/loadavg)"
done
