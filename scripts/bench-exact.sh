#!/usr/bin/env bash
# The exact checker as users run it: `ellery check` end to end (reading,
# routing, checking, printing), on the peer benchmark histories of
# ../shared/corpus/peers and on generated histories with repeated values,
# under a set of models. Prints, per history and model, the verdict next to
# the median wall time, the median CPU time (user + system: comparable when
# the machine is shared) and the median peak RSS of RUNS runs.
#
# usage: scripts/bench-exact.sh [RUNS] [SAT_TIMEOUT_SECONDS] [MODELS] [INPUTS]
#   MODELS: comma-separated (default: strong-session-serializable,
#   strong-session-snapshot-isolation,serializable,snapshot-isolation,
#   consistent-view,read-committed)
#   INPUTS: comma-separated names among peers, heavy-dup, gen-100k (default:
#   peers,heavy-dup; gen-100k is a generated 100k-transaction
#   strict-serializable history, issue 22's target without session order)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
timeout=${2:-60}
models=${3:-strong-session-serializable,strong-session-snapshot-isolation,serializable,snapshot-isolation,consistent-view,read-committed}
sets=,${4:-peers,heavy-dup},
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
cargo build --quiet --release
bin="$CARGO_TARGET_DIR/release/ellery"
peers=../shared/corpus/peers
median() { sort -n | sed -n "$(( (runs + 1) / 2 ))p"; }
measure() {
  local label=$1 model=$2 path=$3
  local times=() cpus=() mems=() verdict="" out
  for _ in $(seq "$runs"); do
    out=$( { /usr/bin/time -f "%e %M %U %S" "$bin" check -q --output summary -m rw-register \
      -c "$model" --sat-timeout "$((timeout * 1000))" "$path" || true; } 2>&1 )
    verdict=$(head -n 1 <<< "$out" | cut -f2)
    times+=("$(tail -n 1 <<< "$out" | cut -d' ' -f1)")
    mems+=("$(tail -n 1 <<< "$out" | cut -d' ' -f2)")
    cpus+=("$(tail -n 1 <<< "$out" | awk '{ print $3 + $4 }')")
  done
  printf '%-44s %-36s %-8s %7.2f s %7.2f s CPU %6d MB\n' "$label" "$model" "$verdict" \
    "$(printf '%s\n' "${times[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" \
    "$(( $(printf '%s\n' "${mems[@]}" | median) / 1024 ))"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
inputs=()
if [[ $sets == *,peers,* ]]; then
  for d in "$peers"/veristrong/dup-values/*/hist-00000 "$peers"/cobra/one-shot-10k/*; do
    [ -e "$d" ] && inputs+=("$d")
  done
fi
if [[ $sets == *,heavy-dup,* ]]; then
  hd=/tmp/ellery-heavy-dup-5k.edn
  [ -s "$hd" ] || "$bin" gen -w rw-register -n 5000 -k 7 --values 3 --seed 1 > "$hd"
  inputs+=("$hd")
fi
if [[ $sets == *,gen-100k,* ]]; then
  g100k=/tmp/ellery-sat-100k.edn
  [ -s "$g100k" ] || "$bin" gen -w rw-register --mode strict-serializable -n 100000 --seed 3 > "$g100k"
  inputs+=("$g100k")
fi
for path in "${inputs[@]}"; do
  for model in ${models//,/ }; do
    measure "${path#"$peers"/}" "$model" "$path"
  done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
