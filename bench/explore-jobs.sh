#!/usr/bin/env bash
# `--jobs` side by side (issue 14, Build 4): the stateful search of `cudasem explore
# tests/kernels/grid_barrier.ptx --progress fair --level blocks` at several `--jobs`, for one or
# more builds, each run REPEAT times; prints a Markdown table of the median wall and user seconds
# and peak memory per (build, case, jobs), and checks that every run of a case prints the same
# lines (timing aside) at every `--jobs` and in every build.
#
#   bench/explore-jobs.sh [BIN ...]
#
# Environment: JOBS (default "1 2"), REPEAT (default 3), UNREDUCED_STATES (the state bound of the
# unreduced case, default 1000000). With no BIN, builds the release binary. Cases: the grid
# barrier at 8 blocks without reduction (`--reduction none`, cut at UNREDUCED_STATES), and at 8
# and 10 blocks with the default reductions. The launch files are bench/explore-families.sh's.
set -u
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
    cargo build --release -q -p cli || exit 1
    set -- "${CARGO_TARGET_DIR:-target}/release/cudasem"
fi
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
# The launch file writer of bench/explore-families.sh, `grid_barrier_launch N`.
source <(sed -n '/^grid_barrier_launch()/,/^}/p' bench/explore-families.sh)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cases=(
    "8 none --reduction none --max-states ${UNREDUCED_STATES:-1000000}"
    "8 default"
    "10 default"
)
echo "| build | blocks | reduction | jobs | states | wall s (median) | user s (median) | peak MB (median) |"
echo "|---|---|---|---|---|---|---|---|"
status=0
for c in "${cases[@]}"; do
    read -r n reduction flags <<<"$c"
    launch=$(grid_barrier_launch "$n")
    reference=""
    for bin in "$@"; do
        for jobs in ${JOBS:-1 2}; do
            : >"$DIR/times"
            for _ in $(seq "${REPEAT:-3}"); do
                run=("$bin" explore tests/kernels/grid_barrier.ptx --launch "$launch" --progress fair
                    --level blocks --jobs "$jobs")
                # shellcheck disable=SC2086
                if [ -x /usr/bin/time ]; then
                    /usr/bin/time -o "$DIR/t" -f "%e %U %M" "${run[@]}" $flags >"$DIR/out" 2>&1
                    tail -1 "$DIR/t" >>"$DIR/times" # after the exit-status line of a cut search
                else # the shell's own timing: no peak memory
                    TIMEFORMAT="%R %U 0"
                    { time "${run[@]}" $flags >"$DIR/out" 2>&1; } 2>>"$DIR/times"
                fi
                # Timing aside, every run of a case prints the same lines.
                answer=$(grep -v '^explored' "$DIR/out" | md5sum)
                [ -z "$reference" ] && reference=$answer
                if [ "$answer" != "$reference" ]; then
                    echo "DIFFERENT OUTPUT: $bin, $n blocks, $reduction, --jobs $jobs" >&2
                    status=1
                fi
            done
            states=$(grep -o '[0-9]* states (' "$DIR/out" | head -1 | cut -d' ' -f1)
            wall=$(awk '{print $1}' "$DIR/times" | median)
            user=$(awk '{print $2}' "$DIR/times" | median)
            peak=$(awk '{printf "%.0f\n", $3 / 1024}' "$DIR/times" | median)
            echo "| $(basename "$bin") | $n | $reduction | $jobs | $states | $wall | $user | $peak |"
        done
    done
done
exit $status
