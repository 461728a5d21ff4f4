#!/usr/bin/env bash
# Read time and check time (median of RUNS runs, release build) of every
# peer-format history in ../shared/corpus/peers, with the default algorithm
# and with --algorithm sat, under -c serializable (override with MODELS).
# Histories listed in SAT_SKIP (substrings) are not run with sat: today they
# hit the SAT engine's 60 s limit.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${CORPUS:-../shared/corpus/peers}
RUNS=${RUNS:-5}
MODELS=${MODELS:-serializable}
SAT_SKIP=${SAT_SKIP:-"chengRW-10000 BL-10k HD-10k WH-10k"}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ ! -d "$CORPUS" ]; then
  echo "skipping: $CORPUS not found" >&2
  exit 0
fi
cargo build --release --quiet
BIN="$CARGO_TARGET_DIR/release/ellery"
histories=$(find "$CORPUS" -name 'T*.log' -printf '%h\n' | sort -u; find "$CORPUS" \( -name history.bincode -o -name '*.txt' \))
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-60s %8s %10s %-28s %10s %s\n' history ops read-s auto-verdict auto-s sat
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for h in $(echo "$histories" | sort); do
  reads=() autos=() verdict=""
  for _ in $(seq "$RUNS"); do
    start=$(date +%s.%N)
    out=$("$BIN" check -q --verbose --output summary -m rw-register -c "$MODELS" "$h" 2>&1 || true)
    end=$(date +%s.%N)
    reads+=("$(echo "$out" | sed -n 's/.*read \([0-9]*\) client ops in \([0-9.]*\) s.*/\2/p' | head -1)")
    ops=$(echo "$out" | sed -n 's/.*read \([0-9]*\) client ops in.*/\1/p' | head -1)
    autos+=("$(echo "$end - $start" | bc)")
    verdict=$(echo "$out" | { grep -P '\t' || echo "x	error"; } | cut -f2- | tr '\t' ' ' | head -1)
  done
  sat="skipped"
  skip=no
  for s in $SAT_SKIP; do [[ "$h" == *"$s"* ]] && skip=yes; done
  if [ "$skip" = no ]; then
    times=() sv=""
    for _ in $(seq 3); do
      start=$(date +%s.%N)
      sv=$("$BIN" check -q --output summary --algorithm sat -m rw-register -c "$MODELS" "$h" 2>&1 | cut -f2- | tr '\t' ' ' || true)
      end=$(date +%s.%N)
      times+=("$(echo "$end - $start" | bc)")
    done
    sat="$sv $(printf '%s\n' "${times[@]}" | median) s"
  fi
  printf '%-60s %8s %10s %-28s %10s %s\n' "${h#"$CORPUS"/}" "$ops" \
    "$(printf '%s\n' "${reads[@]}" | median)" "$verdict" \
    "$(printf '%s\n' "${autos[@]}" | median)" "$sat"
done
