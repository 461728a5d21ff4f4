#!/usr/bin/env bash
# Issue 23's targets against the build of the evening the issue was filed
# (`73dff9c`, 24 Nov 22:51 UTC, the last commit before any issue-23 work),
# both run on this host now, interleaved (filed, current, filed, ...).
#
# Why: the host's speed drifts by a third within the hour and by more from
# day to day (on 1 Dec the filed build took 4.1 s on 1M rw-register, which
# the issue measured at 1.89 s), so absolute figures taken at different
# hours do not compare. Each target is a ratio to the figure the issue
# measured (1M list-append 2.0 / 3.78 s, 1M rw-register 1.2 / 1.89 s,
# reading 600 / 342 MB/s); the ratio of the current build to the filed
# one, on the same host at the same minutes, is what the target asks of
# the code. The script prints both builds' medians, their ratio, the
# target's ratio, and the current build's figure scaled to the issue's
# host (the issue's figure times the ratio). Memory needs no scaling.
#
# Reading is each run's own `--verbose` "read N client ops in T s" (the
# file's bytes over T), as `check` reads: both builds print it.
#
# usage: [BIN=path/to/ellery] [FILED=path/to/filed-ellery] scripts/bench-vs-filed.sh [RUNS]
#   The filed build is made once (git worktree + its own target dir,
#   about 3 minutes) into $TMPDIR/ellery-filed-73dff9c; the history files
#   are scripts/bench-targets.sh's (generated here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
tmp=${TMPDIR:-/tmp}
filed_commit=73dff9c
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ -z "${BIN:-}" ]; then
  cargo build --quiet --release
  BIN="$CARGO_TARGET_DIR/release/ellery"
fi
FILED=${FILED:-$tmp/ellery-filed-$filed_commit}
if [ ! -x "$FILED" ]; then
  wt=$(mktemp -d "$tmp/ellery-filed-wt.XXXXXX")
  git worktree add -q --detach "$wt" "$filed_commit"
  (cd "$wt" && CARGO_TARGET_DIR="$tmp/ellery-filed-target" cargo build --quiet --release)
  cp "$tmp/ellery-filed-target/release/ellery" "$FILED"
  git worktree remove --force "$wt"
fi
gen() { # FILE ARGS...: generate once, as bench-targets.sh does
  local f=$1; shift
  [ -s "$f" ] || "$BIN" gen "$@" > "$f"
}
la="$tmp/ellery-t-la1m.edn"
rw="$tmp/ellery-t-rw1m.edn"
gen "$la" -w list-append -n 1000000 --seed 1
gen "$rw" -w rw-register -n 1000000 --seed 1

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# one LABEL BINARY FILE: appends "wall KB read-seconds" to $out/LABEL and
# the verdict (first line) to $out/LABEL.verdict.
one() {
  local label=$1 bin=$2 file=$3 err
  err=$({ /usr/bin/time -f "%e %M" "$bin" check --verbose --output summary "$file" \
    > "$out/$label.verdict"; } 2>&1 || true)
  printf '%s %s\n' "$(tail -n 1 <<< "$err")" \
    "$(grep -o 'client ops in [0-9.]*' <<< "$err" | awk '{ print $4 }')" >> "$out/$label"
}
median() { # LABEL COLUMN
  grep -E '^[0-9.]+ [0-9]+ [0-9.]+$' "$out/$1" | cut -d ' ' -f "$2" | sort -n |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
echo "load before: $(cut -d ' ' -f 1 /proc/loadavg); filed build $filed_commit ($FILED) against $BIN, $runs interleaved runs each"
for _ in $(seq "$runs"); do
  for f in la rw; do
    file=$la
    [ "$f" = rw ] && file=$rw
    one "$f-filed" "$FILED" "$file"
    one "$f-now" "$BIN" "$file"
  done
done
# row WHAT FILE LABEL ISSUE_SECONDS TARGET_SECONDS TARGET_MB
row() {
  local what=$1 file=$2 l=$3 issue=$4 target=$5 mb=$6
  awk -v w="$what" -v tf="$(median "$l-filed" 1)" -v tn="$(median "$l-now" 1)" \
      -v mf="$(median "$l-filed" 2)" -v mn="$(median "$l-now" 2)" \
      -v i="$issue" -v t="$target" -v mb="$mb" -v v="$(head -c 40 "$out/$l-now.verdict")" 'BEGIN {
    r = tn / tf
    printf "%-14s filed %6.2f s %5d MB | now %6.2f s %5d MB | ratio %.2f (target %.2f: %s) | on the issue'"'"'s host %.2f s (target %.1f s); memory %s | %s\n",
      w, tf, mf / 1024, tn, mn / 1024, r, t / i, (r <= t / i ? "met" : "not met"),
      i * r, t, (mn / 1024 < mb ? "met" : "not met"), v
  }'
  # Reading: bytes over the reader's own seconds.
  local bytes
  bytes=$(stat -c %s "$file")
  awk -v w="$what" -v b="$bytes" -v rf="$(median "$l-filed" 3)" -v rn="$(median "$l-now" 3)" 'BEGIN {
    f = b / rf / 1e6; n = b / rn / 1e6; s = n / f
    printf "%-14s reading: filed %4.0f MB/s, now %4.0f MB/s, speed-up %.2f (target %.2f: %s), on the issue'"'"'s host %.0f MB/s\n",
      w, f, n, s, 600 / 342, (s >= 600 / 342 ? "met" : "not met"), 342 * s
  }'
}
# Both builds must give the same verdict (figures of a wrong answer are
# no figures).
for l in la rw; do
  if ! cmp -s <(cut -f 2- "$out/$l-filed.verdict") <(cut -f 2- "$out/$l-now.verdict"); then
    echo "verdicts differ on $l: filed '$(cut -f 2- "$out/$l-filed.verdict")', now '$(cut -f 2- "$out/$l-now.verdict")'"
  fi
done
row "1M list-append" "$la" la 3.78 2.0 600
row "1M rw-register" "$rw" rw 1.89 1.2 400
echo "load after: $(cut -d ' ' -f 1 /proc/loadavg)"
