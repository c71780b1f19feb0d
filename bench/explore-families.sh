#!/usr/bin/env bash
# Issue 14's growth tables through the CLI: `cudasem explore --progress fair --level blocks` on the
# corpus grid barrier and spin lock at N = 2..MAX_N blocks of 32 threads, with the default
# reductions (fold + persistent sets + symmetry over identical blocks), with the default reductions
# but `--symmetry none` (row `fold-nosym`), and with `--reduction none`. The grid barrier's launch is
# written per N (its buffers and `n` grow with the grid; `--grid N` alone would index past them);
# the spin lock's does not depend on N. Prints a Markdown table: states, seconds, peak memory,
# verdict (or the bound that cut the search).
#
#   bench/explore-families.sh [TIMEOUT_S] [MAX_N]
#
# Environment: CUDASEM_BIN runs that binary instead of building one (say, a copy of an earlier
# build, for a before/after table); REDUCTIONS picks the rows (default "fold fold-nosym none").
set -u
cd "$(dirname "$0")/.."
TIMEOUT=${1:-30}
MAX_N=${2:-8}
if [ -n "${CUDASEM_BIN:-}" ]; then
    BIN=$CUDASEM_BIN
else
    cargo build --release -q -p cli || exit 1
    BIN=${CARGO_TARGET_DIR:-target}/release/cudasem
fi
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT

grid_barrier_launch() { # N -> a launch file for N blocks of 32 threads
    local n=$1 f="$DIR/grid_barrier_$1.ron"
    cat >"$f" <<RON
(
    kernel: "grid_barrier",
    grid: ($n, 1, 1),
    block: (32, 1, 1),
    buffers: {
        "in": (type: "s32", len: $((32 * n)), init: Range(start: 1, step: 1)),
        "partial": (type: "s32", len: $n),
        "count": (type: "s32", len: 1),
        "out": (type: "s32", len: $n),
    },
    args: [Buffer("in"), Buffer("partial"), Buffer("count"), Buffer("out"), Scalar(type: "s32", value: $((32 * n)))],
)
RON
    echo "$f"
}

echo "| kernel | blocks | reduction | states | s | peak MB | answer |"
echo "|---|---|---|---|---|---|---|"
for kernel in grid_barrier spinlock; do
    for reduction in ${REDUCTIONS:-fold fold-nosym none}; do
        case $reduction in
            fold-nosym) flags=(--reduction fold --symmetry none) ;;
            *) flags=(--reduction "$reduction") ;;
        esac
        for n in $(seq 2 "$MAX_N"); do
            if [ "$kernel" = grid_barrier ]; then
                launch=(--launch "$(grid_barrier_launch "$n")")
            else
                launch=(--launch tests/kernels/spinlock.ron --grid "$n")
            fi
            out=$(/usr/bin/time -f "TIME %e %M" "$BIN" explore "tests/kernels/$kernel.ptx" "${launch[@]}" \
                --progress fair --level blocks "${flags[@]}" --timeout "$TIMEOUT" 2>&1)
            states=$(grep -oE '^explored .*: [0-9]+ states' <<<"$out" | grep -oE '[0-9]+ states$' | grep -oE '[0-9]+')
            read -r secs kb < <(grep -oE '^TIME [0-9.]+ [0-9]+' <<<"$out" | cut -d' ' -f2-)
            if grep -q 'REACHED\|reached after' <<<"$out"; then
                answer="cut: $(grep -oE -- '--(timeout|max-states) [0-9]+' <<<"$out" | head -1)"
            else
                answer=$(grep -oE '^verdict: [a-z ]+' <<<"$out" | sed 's/verdict: //; s/ under.*//')
            fi
            echo "| $kernel | $n | $reduction | ${states:-?} | ${secs:-?} | $(( ${kb:-0} / 1024 )) | ${answer:-?} |"
            [[ "$answer" == cut* || -z "$states" ]] && break
        done
    done
done
