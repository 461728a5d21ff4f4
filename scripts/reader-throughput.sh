#!/usr/bin/env bash
# Measures history-reading throughput (MB/s, median of RUNS runs) of
# ellery's streaming reader (as check runs it, and cut into 1 or 2 parts)
# and of edn-rs, on a >=100 MB history made by repeating ../shared/corpus/elle/huge-scc.edn with shifted :index and
# :process values (so indices stay unique and ascending, and the copies'
# unfinished invocations do not collide).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${SRC:-../shared/corpus/elle/huge-scc.edn}
BIG=${BIG:-/tmp/big-history.edn}
RUNS=${RUNS:-3}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
if [ ! -f "$SRC" ]; then
  echo "skipping: $SRC not found" >&2
  exit 0
fi
if [ ! -s "$BIG" ] || [ "$(stat -c %s "$BIG")" -lt 100000000 ]; then
  python3 - "$SRC" "$BIG" <<'PY'
import re, sys
src, dst = sys.argv[1], sys.argv[2]
text = open(src, encoding="utf-8").read()
n_ops = max(int(m) for m in re.findall(r":index (\d+)", text)) + 1
copies = -(-100_000_000 // len(text.encode())) + 1
with open(dst, "w", encoding="utf-8") as out:
    for c in range(copies):
        out.write(re.sub(r":(index|process) (\d+)",
                         lambda m: ":%s %d" % (m.group(1), int(m.group(2)) + c * (n_ops if m.group(1) == "index" else 100000)),
                         text))
PY
fi
cargo build --release --quiet --example read_throughput
BIN="$CARGO_TARGET_DIR/release/examples/read_throughput"
echo "file: $BIG ($(stat -c %s "$BIG") bytes)"
"$BIN" "$BIG" ellery "$RUNS" | tail -n 1
# The same bytes cut into parts read on that many threads (`ellery check`
# reads on all cores by default, big files in 64 MB blocks each cut into
# parts; ELLERY_READ_THREADS=N caps it): the speed-up from 1 to 2 cores.
"$BIN" "$BIG" parts=1 "$RUNS" | tail -n 1
"$BIN" "$BIG" parts=2 "$RUNS" | tail -n 1
"$BIN" "$BIG" edn-rs "$RUNS" | tail -n 1
