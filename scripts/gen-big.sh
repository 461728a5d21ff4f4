#!/usr/bin/env bash
# Generates a large list-append history: 10 processes, 10 active keys of at
# most 32 appends each, 1-7 (about 4) micro-ops per txn, half reads, strict
# serializable.
#
# usage: scripts/gen-big.sh N OUT [extra `examples/gen.rs` flags...]
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 N OUT [--seed S] [--mode M] ..." >&2
  exit 2
fi
n=$1
out=$2
shift 2
cd "$(dirname "$0")/.."
cargo run --quiet --release --example gen -- "$n" "$out" \
  --processes 10 --keys 10 --max-writes-per-key 32 --max-mops 7 "$@"
