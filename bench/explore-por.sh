#!/usr/bin/env bash
# Persistent sets in the stateful search (issue 14): states, time and peak memory of
# `explore --progress fair --level blocks` on the grid barrier and the spin lock at 2..MAX_N
# blocks, without (`none`) and with (`persistent`) the reduction (explore/examples/por_scale.rs).
# Once a case runs out of time, the larger ones of its row are skipped. Prints a Markdown table.
#
#   bench/explore-por.sh [TIMEOUT] [MAX_N]
set -u
TIMEOUT=${1:-30}
MAX_N=${2:-8}
cargo build --release -q -p explore --example por_scale || exit 1
BIN=${CARGO_TARGET_DIR:-target}/release/examples/por_scale
OUT=$(mktemp)
trap 'rm -f "$OUT" "$OUT.time"' EXIT
echo "| kernel | blocks | reduction | states | machine states | reduced | s | peak MB | fair |"
echo "|---|---|---|---|---|---|---|---|---|"
for kernel in grid_barrier spinlock; do
    for por in none persistent; do
        for n in $(seq 2 "$MAX_N"); do
            /usr/bin/time -f "%M" -o "$OUT.time" "$BIN" "$kernel" "$n" "$por" "$TIMEOUT" >"$OUT" 2>&1
            kb=$(tail -1 "$OUT.time")
            line=$(cat "$OUT")
            states=$(grep -oE '[0-9]+ states' <<<"$line" | head -1 | grep -oE '[0-9]+')
            machine=$(grep -oE '[0-9]+ machine states' <<<"$line" | grep -oE '[0-9]+')
            reduced=$(grep -oE '\([0-9]+ reduced' <<<"$line" | grep -oE '[0-9]+')
            secs=$(grep -oE '[0-9.]+ s,' <<<"$line" | grep -oE '[0-9.]+')
            verdict=$(sed 's/.*fair: //' <<<"$line")
            echo "| $kernel | $n | $por | $states | $machine | $reduced | $secs | $((kb / 1024)) | $verdict |"
            grep -q "bound hit" <<<"$line" && break
        done
    done
done
