#!/usr/bin/env bash
# How fast a teaching page of a long run is made and opens (issue 19: a 1-million-step run must
# give a page that opens in under 5 s). Runs the spin lock of the thesis's Listing 6.1 (it never
# terminates) for STEPS steps with a trace, makes the page of its first window and of its last,
# and opens each in headless Chromium, which reports how long the page took from navigation to
# its first drawn step (`performance.now()` at the end of the page's script; the browser's own
# start-up is not counted).
#
#   bench/view_page.sh [STEPS]     (default 1000000; needs chromium and a release build)
set -euo pipefail
STEPS=${1:-1000000}
cd "$(dirname "$0")/.."
cargo build --release -p cli >/dev/null 2>&1
B=${CARGO_TARGET_DIR:-target}/release/cudasem
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$BROWSER" ] || { echo "no chromium on PATH (apt-get install chromium)"; exit 2; }
PTX=tests/thesis/listing_6_1.ptx
"$B" run $PTX --launch tests/thesis/listing_6_1.ron --max-steps "$STEPS" --trace "$T/run.jsonl" >/dev/null || true
echo "trace: $STEPS steps, $(du -k "$T/run.jsonl" | cut -f1) KiB"
for from in 1 $((STEPS > 5000 ? STEPS - 4999 : 1)); do
  start=$(date +%s.%N)
  "$B" view "$T/run.jsonl" $PTX --from "$from" -o "$T/page.html" >/dev/null
  made=$(echo "$(date +%s.%N) - $start" | bc)
  ms=$("$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
        --dump-dom "file://$T/page.html" 2>/dev/null | grep -o 'data-drawn-ms="[0-9]*"' | grep -o '[0-9]*')
  echo "window from step $from: page $(du -k "$T/page.html" | cut -f1) KiB, made in ${made} s, opened and drawn in ${ms} ms"
done
