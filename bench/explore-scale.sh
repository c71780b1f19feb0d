#!/usr/bin/env bash
# Exploration at scale (issue 14): states, time and peak memory of the stateful search on the
# grid barrier and the spin lock (2..8 blocks, `explore --progress fair --level blocks`) and of
# the litmus explorer on the MP-n, SB-n, LB-n (n = 2..8) and IRIW-n (n = 4..8) families (tests/litmus/families),
# with and without the fold of invisible steps (`--reduction fold|none`). Each case is bounded
# by --timeout (default 30 s); once a case runs out of time, the larger ones of its row are
# skipped. Prints a Markdown table.
#
#   bench/explore-scale.sh [CUDASEM] [TIMEOUT] [MAX_N]
set -u
BIN=${1:-target/release/cudasem}
TIMEOUT=${2:-30}
MAX_N=${3:-8}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

# One case: prints `states | seconds | peak MB | verdict`.
measure() {
    /usr/bin/time -f "%e %M" -o "$OUT.time" "$@" >"$OUT" 2>&1
    # The last line: `time` first says "Command exited with non-zero status" when it did.
    read -r secs kb < <(tail -1 "$OUT.time")
    local states verdict
    states=$(grep -oE '^(explored .*: [0-9]+ states|Explored [0-9]+ states)' "$OUT" | grep -oE '[0-9]+ states$' | grep -oE '[0-9]+' | paste -sd+ | bc)
    if grep -q "REACHED\|Status: time_limit\|Status: bounded\|bounded out\|time limit" "$OUT"; then
        verdict="bound hit"
    else
        verdict=$(grep -oE '^(verdict: .*|Verdict: .*)' "$OUT" | head -1 | cut -c1-40)
    fi
    echo "${states:-?} | $secs | $((kb / 1024)) | $verdict"
    [ "$verdict" != "bound hit" ]
}

echo "| case | n | reduction | states | s | peak MB | verdict |"
echo "|---|---|---|---|---|---|---|"
for kernel in grid_barrier spinlock; do
    for red in none fold; do
        for n in $(seq 2 "$MAX_N"); do
            row=$(measure "$BIN" explore "tests/kernels/$kernel.ptx" --launch "tests/kernels/$kernel.ron" \
                --grid "$n" --progress fair --level blocks --reduction "$red" \
                --max-states 100000000 --timeout "$TIMEOUT")
            ok=$?
            echo "| $kernel | $n | $red | $row |"
            [ $ok -eq 0 ] || break
        done
    done
done
for family in MP SB LB IRIW; do
    for red in none fold; do
        for n in $(seq 2 "$MAX_N"); do
            # IRIW-n starts at n = 4 (two writers, two readers).
            [ -f "tests/litmus/families/$family-$n.litmus" ] || continue
            row=$(measure "$BIN" litmus "tests/litmus/families/$family-$n.litmus" \
                --reduction "$red" --max-states 100000000 --timeout "$TIMEOUT")
            ok=$?
            echo "| $family-n | $n | $red | $row |"
            [ $ok -eq 0 ] || break
        done
    done
done
