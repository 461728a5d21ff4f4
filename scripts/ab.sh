#!/usr/bin/env bash
# A/B timing of two ellery binaries on the same command, runs interleaved
# (A, B, A, B, ...) so that the host's drift hits both alike: prints, for
# each, the median wall time, user and system CPU and peak RSS, and B/A,
# with each binary's verdict (the first line it printed) and whether the
# two printed the same.
# On a shared, noisy machine this is the comparison to trust; absolute
# figures drift by tens of percent within the hour.
#
# usage: scripts/ab.sh RUNS BIN_A BIN_B -- ARGS...
#   e.g. scripts/ab.sh 9 /tmp/ellery-old target/release/ellery -- check -q h.edn
set -euo pipefail
if [ $# -lt 4 ] || [ "$4" != "--" ]; then
  echo "usage: $0 RUNS BIN_A BIN_B -- ARGS..." >&2
  exit 2
fi
runs=$1 a=$2 b=$3
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$runs"); do
  for x in A B; do
    bin=$a
    [ "$x" = B ] && bin=$b
    /usr/bin/time -a -o "$tmp/$x" -f "%e %U %S %M" "$bin" "$@" > "$tmp/$x.out" 2> /dev/null || true
  done
done
median() { # FILE COLUMN
  grep -E '^[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+$' "$1" | cut -d ' ' -f "$2" | sort -n |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
for x in A B; do
  kb=$(median "$tmp/$x" 4)
  printf '%s: median wall %s s, user %s s, sys %s s, peak %d MB (%d runs): %s\n' "$x" \
    "$(median "$tmp/$x" 1)" "$(median "$tmp/$x" 2)" "$(median "$tmp/$x" 3)" \
    $((${kb:-0} / 1024)) "$(grep -cE '^[0-9.]+ ' "$tmp/$x" || true)" \
    "$(head -n 1 "$tmp/$x.out" | cut -c 1-60)"
done
if cmp -s "$tmp/A.out" "$tmp/B.out"; then
  echo "outputs: identical"
else
  echo "outputs: DIFFER"
fi
awk -v a="$(median "$tmp/A" 1)" -v b="$(median "$tmp/B" 1)" \
  'BEGIN { if (a > 0) printf "B/A wall %.3f\n", b / a }'
