#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz / libFuzzer, nightly toolchain) of the
# readers and the whole check. Runs each target for SECONDS (default 600),
# one after the other at the lowest priority, with libFuzzer's limits of 10 s
# per input and 4 GB of memory, seeded from test-histories/ and, when
# present, ../shared/corpus. Prints executions, coverage and time per
# target; exits 1 if any target found a crash (its input is left under
# fuzz/artifacts/<target>/, to be turned into a regression test). Leak
# detection is off: the only leak reported is glibc's bookkeeping for the
# thread-local destructors of scoped worker threads, not ellery's memory.
# FUZZ_SKIP_BUILD=1 runs the binaries already built.
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   targets: edn_ops edn_value json_ops peers check (default: all)
# needs:   rustup toolchain install nightly; cargo install cargo-fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(edn_ops edn_value json_ops peers check)
shared=../shared/corpus
[ -d "$shared" ] || shared=

# Seeds: copies of the histories each target reads, under fuzz/corpus/
# (not committed). `check` and `peers` take a leading selector byte.
seed() {
  local target=$1 dir=fuzz/corpus/$1
  [ -d "$dir" ] && return
  mkdir -p "$dir"
  local n=0
  find_files() { find test-histories ${shared:+"$shared"} -type f "$@" 2>/dev/null | sort; }
  case $target in
    edn_ops|edn_value)
      find_files -name '*.edn' -size -64k | while read -r f; do
        n=$((n + 1)); cp "$f" "$dir/seed-$n"; done ;;
    json_ops)
      find_files -name '*.json' -size -64k | while read -r f; do
        n=$((n + 1)); cp "$f" "$dir/seed-$n"; done ;;
    check)
      find_files -name '*.edn' -size -16k | while read -r f; do
        n=$((n + 1))
        { printf "\\x$(printf %02x $((n % 256)))"; cat "$f"; } > "$dir/seed-$n"; done ;;
    peers)
      find_files -name '*.txt' -size -64k | while read -r f; do
        n=$((n + 1)); { printf '\x00'; cat "$f"; } > "$dir/text-$n"; done
      find_files -name 'history.bincode' | head -n 20 | while read -r f; do
        n=$((n + 1)); { printf '\x01'; head -c 8192 "$f"; } > "$dir/dbcop-$n"; done
      find_files -name 'T0.log' | while read -r f; do
        n=$((n + 1))
        { printf '\x02'
          for log in "$(dirname "$f")"/T*.log; do head -c 2048 "$log"; printf '\xff'; done
        } > "$dir/cobra-$n"; done ;;
  esac
}

# Build once, then run the binaries: edits made while a long run goes on
# do not change what the later targets test.
[ -n "${FUZZ_SKIP_BUILD:-}" ] || nice -n 19 cargo +nightly fuzz build -O
bindir=fuzz/target/x86_64-unknown-linux-gnu/release
mkdir -p fuzz/logs
status=0
printf '%-10s %8s %12s %8s %8s %8s\n' target seconds executions exec/s cov ft
for t in "${targets[@]}"; do
  seed "$t"
  max_len=65536
  [ "$t" = check ] && max_len=16384
  log=fuzz/logs/$t.log
  mkdir -p "fuzz/artifacts/$t"
  if ! nice -n 19 "$bindir/$t" "fuzz/corpus/$t" -artifact_prefix="fuzz/artifacts/$t/" \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
      -max_len="$max_len" -detect_leaks=0 -print_final_stats=1 > "$log" 2>&1; then
    status=1
    echo "$t: FAILED (see $log and fuzz/artifacts/$t/)"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  last=$(grep -E '#[0-9]+.*cov: ' "$log" | tail -n 1)
  cov=$(sed -E 's/.*cov: ([0-9]+).*/\1/' <<<"$last")
  ft=$(sed -E 's/.*ft: ([0-9]+).*/\1/' <<<"$last")
  printf '%-10s %8s %12s %8s %8s %8s\n' "$t" "$secs" "$runs" "$rate" "$cov" "$ft"
done
exit $status
