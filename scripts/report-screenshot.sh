#!/usr/bin/env bash
# Renders an HTML report (index.html written by `ellery check -d DIR`) in
# headless Chromium, with the network cut off (the page must be
# self-contained), and saves a PNG screenshot. Also writes the DOM Chromium
# built to OUT.dom.html, so a caller can assert on what actually rendered.
# Exits 3 when Chromium is not installed (Debian: apt-get install chromium).
#
# usage: scripts/report-screenshot.sh PAGE.html OUT.png [WIDTH [HEIGHT]]
set -euo pipefail
page=${1:?usage: report-screenshot.sh PAGE.html OUT.png [WIDTH [HEIGHT]]}
out=${2:?usage: report-screenshot.sh PAGE.html OUT.png [WIDTH [HEIGHT]]}
width=${3:-1200}
height=${4:-900}
browser=""
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" > /dev/null; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
  echo "report-screenshot: no chromium found (apt-get install chromium)" >&2
  exit 3
fi
[ -f "$page" ] || { echo "report-screenshot: $page: no such file" >&2; exit 3; }
url="file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
# The host-resolver rule makes every network fetch fail, so a page that
# needed one would render incomplete (and the DOM assertions catch it).
common=(--headless --no-sandbox --disable-gpu --hide-scrollbars
  --no-first-run --disable-extensions --user-data-dir="$profile"
  --host-resolver-rules="MAP * ~NOTFOUND" --window-size="$width,$height")
"$browser" "${common[@]}" --screenshot="$out" "$url" 2> "$out.log" > /dev/null
"$browser" "${common[@]}" --dump-dom "$url" > "$out.dom.html" 2>> "$out.log"
[ -s "$out" ] || { echo "report-screenshot: no screenshot written" >&2; cat "$out.log" >&2; exit 1; }
echo "$out"
