#!/bin/sh
# Times every query of issue 19's acceptance table (`ellery robust`, release
# build): the median of 3 runs of wall time and peak memory, as a Markdown
# table. Usage: scripts/bench-robust.sh [path/to/ellery]
set -eu
E=${1:-target/release/ellery}
D=test-histories/robust
echo "| query | answer | median time | peak memory |"
echo "| --- | --- | --- | --- |"
q() {
  file=$1; shift
  t=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o /tmp/bench-robust.$$ "$E" robust "$D/$file" --output summary "$@" > /tmp/bench-robust-out.$$ || true
    t="$t$(tail -n1 /tmp/bench-robust.$$)
"
  done
  med=$(printf '%s' "$t" | sort -n | sed -n 2p)
  ans=$(cut -f2 /tmp/bench-robust-out.$$)
  # A run that crashed or refused the query prints no answer: say so
  # rather than time it as if it had answered.
  ans=${ans:-"ERROR: no answer"}
  echo "| \`$file $*\` | $ans | $(echo "$med" | cut -d' ' -f1) s | $(echo "$med" | cut -d' ' -f2) KB |"
}
for k in 2 3 4; do q bank.rob -c ec -k $k; done
for k in 2 3 4; do q bank.rob -c psi -k $k; done
q bank.rob -c psi -k 4 --prove shortest-path
q bank.rob -c psi -k 4 --prove inductive
for m in si serializable; do q bank.rob -c $m -k 4; done
for m in ec cc psi pc si serializable; do for k in 3 4; do q long-fork.rob -c $m -k $k; done; done
q long-fork.rob -c si -k 4 --prove inductive
for m in psi si serializable; do q write-skew.rob -c $m -k 2; done
q tpcc.rob -c ec -k 2
for k in 2 3 4; do q tpcc.rob -c psi -k $k; done
for k in 2 3 4; do q tpcc.rob -c si -k $k; done
q tpcc.rob -c si -k 4 --prove inductive
q tpcc-counter.rob -c ec -k 2
for k in 3 4; do q tpcc-counter.rob -c psi -k $k; done
q tpcc-counter.rob -c si -k 4
q tpcc-counter.rob -c si -k 4 --prove inductive
q courseware.rob -c ec -k 2
for k in 3 4; do q courseware-psi.rob -k $k; done
for k in 4 5; do q courseware-si.rob -k $k; done
q courseware-si.rob -k 5 --prove shortest-path
# With ABORT (an aborted instance is no part of the execution).
for k in 5 6; do q long-fork-abort.rob -c ec -k $k; done
q long-fork-abort.rob -c si -k 6
q long-fork-abort.rob -c si -k 4 --prove shortest-path
q tpcc-abort.rob -c ec -k 2
for k in 3 4; do q tpcc-abort.rob -c psi -k $k; done
q tpcc-abort.rob -c si -k 4
q tpcc-abort.rob -c si -k 4 --prove inductive
q courseware-abort.rob -c ec -k 2
q courseware-abort-psi.rob -k 4
for k in 4 5; do q courseware-abort-si.rob -k $k; done
q courseware-abort-si.rob -k 5 --prove shortest-path
# Fresh ids (soft deletes): the paper's shortest-path row, k = 8.
for k in 4 5; do q courseware-fresh-si.rob -k $k; done
q courseware-fresh-si.rob -k 8 --prove shortest-path
rm -f /tmp/bench-robust.$$ /tmp/bench-robust-out.$$
