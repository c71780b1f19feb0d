#!/usr/bin/env bash
# Dat3M's liveness results (PTXv7_5-Liveness-expected.csv: 1 = every execution terminates under
# a fair scheduler) under `--memory flat` and `--memory cached`, side by side (issue 15, "Dat3M
# liveness CSV"): each row runs `litmus FILE --progress MODEL` under both memories and prints
# the expected verdict, each memory's verdict (P, F, or - when the state bound cut the search),
# its states and seconds. Compare two builds (before/after a reduction) with --bin.
#
# Usage: bench/liveness-cached.sh [--bin PATH] [--model MODEL] [--max-states N] [--suite DIR]
#                                 [--all]
#   --suite: the ptx-litmus folder (default: $CUDASEM_CONFORMANCE/ptx-litmus);
#   --all:   every row (default: the barrier and quorum rows, not the 70 CADP programs).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=target/release/cudasem
MODEL=fair
MAX_STATES=300000
SUITE="${CUDASEM_CONFORMANCE:-../shared/conformance}/ptx-litmus"
ALL=0
while [ $# -gt 0 ]; do
    case $1 in
        --bin) BIN=$2; shift 2 ;;
        --model) MODEL=$2; shift 2 ;;
        --max-states) MAX_STATES=$2; shift 2 ;;
        --suite) SUITE=$2; shift 2 ;;
        --all) ALL=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -x "$BIN" ] || { echo "no binary at $BIN (cargo build --release -p cli)" >&2; exit 2; }

run() { # FILE MEMORY -> "verdict states seconds"
    local start end out
    start=$(date +%s.%N)
    out=$("$BIN" litmus "$1" --memory "$2" --progress "$MODEL" --max-states "$MAX_STATES" \
        --format json 2>/dev/null || true)
    end=$(date +%s.%N)
    python3 -c '
import json, sys
try:
    t = json.loads(sys.argv[1])["termination"]
    v = t.get("verdict") or "-"
    print(v, t.get("states"), end=" ")
except Exception:
    print("error ?", end=" ")
' "$out"
    printf '%.2f\n' "$(echo "$end - $start" | bc)"
}

echo "| test | Dat3M | flat: verdict, states, s | cached: verdict, states, s |"
echo "|---|---|---|---|"
while IFS=, read -r path expected; do
    rel=${path#litmus/PTX/}
    [ "$rel" = "$path" ] && continue
    if [ $ALL = 0 ] && [[ $rel == CADP/* ]]; then continue; fi
    file="$SUITE/$rel"
    [ -f "$file" ] || continue
    read -r fv fs ft < <(run "$file" flat)
    read -r cv cs ct < <(run "$file" cached)
    want=$([ "$(echo "$expected" | tr -d '[:space:]')" = 1 ] && echo P || echo F)
    echo "| $rel | $want | $fv, $fs, $ft | $cv, $cs, $ct |"
done <"$SUITE/PTXv7_5-Liveness-expected.csv"
