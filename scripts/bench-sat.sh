#!/usr/bin/env bash
# Issue 22's performance targets, on the path users run (`ellery check`,
# end to end, verdict printed next to the median time and peak RSS): the
# peer 10k histories and the heavy-duplicates history under serializable
# and snapshot isolation with and without session order, and a generated
# 100k-transaction history. A thin wrapper over scripts/bench-exact.sh
# (which takes any set of models and inputs).
#
# usage: scripts/bench-sat.sh [RUNS] [SAT_TIMEOUT_SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/bench-exact.sh "${1:-3}" "${2:-60}" \
  strong-session-serializable,strong-session-snapshot-isolation,serializable,snapshot-isolation \
  peers,heavy-dup,gen-100k
