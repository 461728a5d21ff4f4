#!/usr/bin/env bash
# `ellery watch` (issue 17): sustained throughput and peak memory of online
# checking, with the history streamed from `ellery gen` into standard input.
#
#   1. list-append under strict-serializable (garbage collection by the
#      real-time frontier): N transactions (default 10M); RSS of the watcher
#      sampled when 1M, 5M and N transactions were read; total time.
#   2. The same stream with one injected stale read (gen places a single
#      fault in the middle, at N/2): the round that reports it.
#   3. rw-register with fences (Cobra's collection, src/watch/fence_gc.rs):
#      RW_N transactions (default 1M) generated strict-serializable with a
#      fence per process every 20 transactions, checked under
#      strict-serializable (real time orders the writes, so nearly all is
#      collected). Under a session-only model (strong-session-serializable)
#      collection needs the writes of each key ordered by fences or reads,
#      which a hot-key blind-write workload does not give: see the README.
#
# usage: scripts/bench-watch.sh [N] [ROUND] [RW_N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000000}
round=${2:-50000}
rw_n=${3:-1000000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release
bin="$CARGO_TARGET_DIR/release/ellery"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Runs `gen ARGS | watch WATCH_ARGS -` and samples the watcher's RSS at 1M,
# 5M and N transactions read (from its --verbose round lines); fails unless
# the final map's :valid? is EXPECT (a figure for a wrong verdict is no figure).
run() {
  local label=$1 gen_args=$2 watch_args=$3 expect=$4
  local log="$tmp/$label.log"
  local start=$SECONDS
  # shellcheck disable=SC2086
  "$bin" gen $gen_args | /usr/bin/time -f "time %e s peak %M KB" \
    "$bin" watch -q --verbose --no-spool --round "$round" $watch_args - \
    > "$tmp/$label.out" 2> "$log" &
  local tpid=$!
  local wpid=""
  for _ in $(seq 100); do
    wpid=$(cat "/proc/$tpid/task/$tpid/children" 2>/dev/null | awk '{print $1}') || true
    [ -n "$wpid" ] && break
    sleep 0.1
  done
  local marks=(1000000 5000000 "$n") i=0
  while kill -0 "$tpid" 2>/dev/null; do
    local read
    read=$(grep -o 'round [0-9]*: [0-9]* txns read' "$log" 2>/dev/null | tail -n 1 | awk '{print $3}') || true
    if [ -n "${read:-}" ] && [ "$i" -lt 3 ] && [ "$read" -ge "${marks[$i]}" ]; then
      local rss
      rss=$(awk '/VmRSS/ {print $2}' "/proc/$wpid/status" 2>/dev/null || echo "?")
      echo "$label: RSS after $read txns: $rss KB"
      i=$((i + 1))
    fi
    sleep 0.2
  done
  wait "$tpid" || true
  local secs=$((SECONDS - start))
  echo "$label: $(grep '^time' "$log")  (wall ${secs}s for the pipeline)"
  echo "$label: last round: $(grep 'round ' "$log" | tail -n 1)"
  echo "$label: final map: $(tail -n 1 "$tmp/$label.out" | cut -c1-120)"
  if ! tail -n 1 "$tmp/$label.out" | grep -q ":valid? $expect"; then
    echo "$label: expected :valid? $expect" >&2
    exit 1
  fi
}

run list-append "-n $n -p 10 -k 100 --seed 1" "-c strict-serializable" true
run stale-read "-n $n -p 10 -k 100 --seed 1 --fault stale-read" "-c strict-serializable --stop-on-first" false
echo "stale-read: injected at about $((n / 2)) txns; reported in: $(grep 'round ' "$tmp/stale-read.log" | tail -n 1)"
run rw-fences "-w rw-register -n $rw_n -p 10 -k 100 --seed 1 --mode strict-serializable --fences 20" "-c strict-serializable" true
