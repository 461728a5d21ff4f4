#!/usr/bin/env bash
# The speed targets of issues 17 and 23 in one run, on the path users run
# (`ellery check FILE`, `ellery watch FILE`), each with its verdict:
#
#   issue 23: 1M list-append (< 2.0 s, < 600 MB) and 1M rw-register
#             (< 1.2 s, < 400 MB) under `auto`; `auto` vs `--algorithm
#             infer` on a valid 200k rw-register history (<= 1.5x in time
#             and memory), with 10 and 100 processes; reading a file
#             (>= 600 MB/s, as `check` reads it);
#   issue 17: the fenced 1M rw-register stream under
#             strong-session-serializable, with a fence every 20
#             transactions per process (Cobra's setting) and every 10, and
#             the 1M list-append stream under strict-serializable (>= 100k
#             transactions/s each).
#
# Runs are interleaved (auto, infer, auto, ...) and the median of RUNS is
# printed with the load average: the machine is shared and noisy. History
# files are generated once into $TMPDIR (default /tmp).
#
# usage: [BIN=path/to/ellery] scripts/bench-targets.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tmp=${TMPDIR:-/tmp}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
  cargo build --quiet --release --example read_throughput
  cargo build --quiet --release
  BIN="$CARGO_TARGET_DIR/release/ellery"
fi
gen() { # FILE ARGS...: generate once
  local f=$1; shift
  [ -s "$f" ] || "$BIN" gen "$@" > "$f"
}
gen "$tmp/ellery-t-la1m.edn" -w list-append -n 1000000 --seed 1
gen "$tmp/ellery-t-rw1m.edn" -w rw-register -n 1000000 --seed 1
gen "$tmp/ellery-t-rw200k-p10.edn" -w rw-register -n 200000 -p 10 --seed 1
gen "$tmp/ellery-t-rw200k-p100.edn" -w rw-register -n 200000 -p 100 --seed 1
gen "$tmp/ellery-t-f1m.edn" -w rw-register -n 1000000 -p 10 -k 100 --mode strict-serializable --fences 20 --seed 1
gen "$tmp/ellery-t-f1m-f10.edn" -w rw-register -n 1000000 -p 10 -k 100 --mode strict-serializable --fences 10 --seed 1

median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
load() { cut -d ' ' -f 1 /proc/loadavg; }
# run LABEL CMD...: appends "seconds kilobytes" to $tmp/ellery-t-LABEL.runs
# and the first output line (the verdict) to $tmp/ellery-t-LABEL.verdict.
run() {
  local label=$1; shift
  { /usr/bin/time -f "%e %M" "$@" > "$tmp/ellery-t-$label.verdict"; } 2>> "$tmp/ellery-t-$label.runs" || true
}
col() { # LABEL N: the median of column N (1: seconds, 2: KB) of its runs
  grep -E '^[0-9.]+ [0-9]+$' "$tmp/ellery-t-$1.runs" | cut -d ' ' -f "$2" | median
}
report() { # LABEL: median seconds, median MB, verdict
  local t m
  t=$(col "$1" 1)
  m=$(col "$1" 2)
  printf '%-34s %7.2f s %6d MB   %s\n' "$1" "$t" $((m / 1024)) "$(head -c 60 "$tmp/ellery-t-$1.verdict")"
}
labels=(la1m rw1m p10-auto p10-infer p100-auto p100-infer)
for l in "${labels[@]}" f1m-sss f1m-f10-sss la1m-watch; do rm -f "$tmp/ellery-t-$l.runs"; done
# How many cores two busy processes really get (2.00: two free cores;
# 1.00: they share one, as on 29 Nov 05:00 UTC, when every parallel
# phase gained nothing): read the figures below with it.
cores_at_once() {
  local spin='BEGIN { for (i = 0; i < 3e7; i++) x += i }' a b c
  a=$(date +%s.%N); awk "$spin"; b=$(date +%s.%N)
  awk "$spin" & awk "$spin"; wait; c=$(date +%s.%N)
  awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%.2f", 2 * (b - a) / (c - b) }'
}
# Whether the kernel hands free memory back to a hypervisor (free page
# reporting): then ellery leaves huge pages off (src/alloc.rs) and every
# fresh page may wait for the host, so figures run slower after idle time.
reporting() {
  local f=/sys/module/page_reporting/parameters/page_reporting_order o pages
  o=$(cat "$f" 2>/dev/null || echo none)
  case "$o" in -1|none) o=off; pages=on ;; *) o="order $o"; pages=off ;; esac
  [ -n "${ELLERY_HUGE_PAGES:-}" ] && pages="$ELLERY_HUGE_PAGES (ELLERY_HUGE_PAGES)"
  echo "free page reporting: $o, huge pages $pages"
}
echo "load before: $(load); cores usable at once: $(cores_at_once); $(reporting)"
for _ in $(seq "$runs"); do
  run la1m "$BIN" check -q --output summary "$tmp/ellery-t-la1m.edn"
  run rw1m "$BIN" check -q --output summary "$tmp/ellery-t-rw1m.edn"
  for p in p10 p100; do
    run "$p-auto" "$BIN" check -q --output summary "$tmp/ellery-t-rw200k-$p.edn"
    run "$p-infer" "$BIN" check -q --output summary --algorithm infer "$tmp/ellery-t-rw200k-$p.edn"
  done
done
for l in "${labels[@]}"; do report "$l"; done
ratio() { # AUTO INFER: time and memory ratios
  awk -v ta="$(col "$1" 1)" -v tb="$(col "$2" 1)" -v ma="$(col "$1" 2)" -v mb="$(col "$2" 2)" \
      -v l="$1 / $2" 'BEGIN { printf "%-34s %5.2fx time %5.2fx memory\n", l, ta / tb, ma / mb }'
}
ratio p10-auto p10-infer
ratio p100-auto p100-infer
echo "load after checks: $(load)"
if [ -x "$CARGO_TARGET_DIR/release/examples/read_throughput" ]; then
  printf 'read 1M rw-register from its file: %s\n' \
    "$("$CARGO_TARGET_DIR/release/examples/read_throughput" "$tmp/ellery-t-rw1m.edn" file "$runs" | tail -n 1)"
fi
wruns=$(( runs < 3 ? runs : 3 ))
for _ in $(seq "$wruns"); do
  run f1m-sss "$BIN" watch -q --no-spool -c strong-session-serializable "$tmp/ellery-t-f1m.edn"
  run f1m-f10-sss "$BIN" watch -q --no-spool -c strong-session-serializable "$tmp/ellery-t-f1m-f10.edn"
  run la1m-watch "$BIN" watch -q --no-spool "$tmp/ellery-t-la1m.edn"
done
runs=$wruns
report f1m-sss
report f1m-f10-sss
report la1m-watch
rate() { # LABEL WHAT
  awk -v t="$(col "$1" 1)" -v w="$2" 'BEGIN { printf "%s: %.0f transactions/s\n", w, 1000000 / t }'
}
rate f1m-sss "fenced 1M stream (a fence every 20), strong-session-serializable"
rate f1m-f10-sss "fenced 1M stream (a fence every 10), strong-session-serializable"
rate la1m-watch "1M list-append stream, strict-serializable"
echo "load after: $(load); cores usable at once: $(cores_at_once)"
