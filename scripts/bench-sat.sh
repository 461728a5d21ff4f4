#!/usr/bin/env bash
# The SAT checker (release build, examples/sat_bench) on the peer benchmark
# histories of ../shared/corpus/peers (VeriStrong dup-values 10k, PolySI
# fig7, Cobra one-shot-10k) for SER and SI with session order, and on
# generated rw-register histories (2k and 10k without session order, 100k
# with).
# Prints the median check time (reading excluded) of RUNS runs, the
# verdict, and for the 100k history the median peak RSS of the whole run.
#
# usage: scripts/bench-sat.sh [RUNS] [TIMEOUT_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
timeout=${2:-120}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release --example sat_bench
cargo build --quiet --release
bench="$CARGO_TARGET_DIR/release/examples/sat_bench"
bin="$CARGO_TARGET_DIR/release/ellery"
peers=../shared/corpus/peers
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
measure() {
  local label=$1; shift
  local times=() verdict="" line
  for _ in $(seq "$runs"); do
    line=$("$bench" --timeout "$timeout" "$@")
    verdict=$(cut -f2 <<< "$line")
    times+=("$(cut -f5 <<< "$line" | sed 's/check //; s/s$//')")
  done
  t=$(printf '%s\n' "${times[@]}" | median)
  printf '%-60s %-8s median %7.3f s (%d runs)\n' "$label" "$verdict" "$t" "$runs"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for d in "$peers"/veristrong/dup-values/*/hist-00000 "$peers"/polysi/fig7/*/hist-00000 \
         "$peers"/cobra/one-shot-10k/*; do
  [ -e "$d" ] || continue
  name=${d#"$peers"/}
  measure "SER $name" --session "$d"
  measure "SI  $name" --session --si "$d"
done
g2k=/tmp/ellery-sat-2k.edn
[ -s "$g2k" ] || "$bin" gen -w rw-register --mode serializable -n 2000 --seed 1 > "$g2k"
measure "SER (no sessions) generated 2k serializable" "$g2k"
g10k=/tmp/ellery-sat-10k.edn
[ -s "$g10k" ] || "$bin" gen -w rw-register --mode serializable -n 10000 --seed 1 > "$g10k"
measure "SER (no sessions) generated 10k serializable" "$g10k"
measure "SI  (no sessions) generated 10k serializable" --si "$g10k"
g100k=/tmp/ellery-sat-100k.edn
[ -s "$g100k" ] || "$bin" gen -w rw-register --mode strict-serializable -n 100000 --seed 3 > "$g100k"
measure "SER generated 100k strict-serializable" --session "$g100k"
measure "SI  generated 100k strict-serializable" --session --si "$g100k"
for level in SER SI; do
  flags=(--session)
  [ "$level" = SI ] && flags+=(--si)
  mems=()
  for _ in $(seq "$runs"); do
    mems+=("$( { /usr/bin/time -f "%M" "$bench" "${flags[@]}" --timeout "$timeout" "$g100k" > /dev/null; } 2>&1 | tail -n 1)")
  done
  echo "peak RSS ($level 100k, whole run): median $(( $(printf '%s\n' "${mems[@]}" | median) / 1024 )) MB"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
