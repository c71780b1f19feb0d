#!/usr/bin/env bash
# Two cudasem binaries, the same behaviour byte for byte? For a refactoring that must change
# nothing a user sees (issue 15, Build 2: memory behind one trait). Compares, between --before
# and --after:
#   * `run --format json` and the `--trace` JSON Lines of every corpus kernel
#     (tests/kernels/*.ptx with its .ron) under `--memory flat` and `--memory cached`, with the
#     round-robin schedule and a random one;
#   * `litmus --format json` (outcome sets, state counts, verdicts) of every family in
#     tests/litmus/families under both memories, each cut at --max-states states (a bound on
#     states, not time, so that both binaries stop at the same place).
# Prints one line per difference and a summary; exits 1 if anything differs.
#
# Usage: bench/same-behaviour.sh --before BIN --after BIN [--timeout SECONDS] [--skip REGEX]
#          [--max-states N]
#   --timeout: per run (default 120), a safety net only; a run that times out under either
#     binary is reported as such (inconclusive) and compared no further;
#   --max-states: litmus's state bound (default 200000);
#   --skip: kernels whose name matches are left out under cached memory (default `^bench_`:
#     the full-size benchmark kernels take hours under cached memory; bench/cached_vs_flat.sh
#     times them).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
before="" after="" timeout=120 skip='^bench_' max_states=200000
while [ $# -gt 0 ]; do
    case "$1" in
        --before) before="$2"; shift 2 ;;
        --after) after="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --skip) skip="$2"; shift 2 ;;
        --max-states) max_states="$2"; shift 2 ;;
        *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done
if [ -z "$before" ] || [ -z "$after" ]; then
    echo "give --before BIN and --after BIN (see the header of $0)" >&2
    exit 2
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
compared=0 differ=0 timeouts=0

# Runs one command with both binaries ("$@" after the binary) and compares stdout, stderr's
# absence of panics, and the trace file if the command writes one to $work/trace.
compare() {
    local label="$1"; shift
    local side rc_b rc_a
    for side in before after; do
        local bin="$before"; [ "$side" = after ] && bin="$after"
        local args=()
        for a in "$@"; do args+=("${a//@TRACE@/$work/trace.$side}"); done
        set +e
        timeout "$timeout" "$bin" "${args[@]}" >"$work/out.$side" 2>"$work/err.$side"
        echo $? >"$work/rc.$side"
        set -e
    done
    rc_b=$(cat "$work/rc.before") rc_a=$(cat "$work/rc.after")
    compared=$((compared + 1))
    if [ "$rc_b" = 124 ] || [ "$rc_a" = 124 ]; then
        timeouts=$((timeouts + 1)); echo "timeout (exit $rc_b / $rc_a, inconclusive): $label"
        rm -f "$work"/trace.*; return
    fi
    if [ "$rc_b" != "$rc_a" ]; then
        differ=$((differ + 1)); echo "DIFF exit $rc_b vs $rc_a: $label"; return
    fi
    if ! cmp -s "$work/out.before" "$work/out.after"; then
        differ=$((differ + 1)); echo "DIFF output: $label"; return
    fi
    if [ -e "$work/trace.before" ] || [ -e "$work/trace.after" ]; then
        if ! cmp -s "$work/trace.before" "$work/trace.after"; then
            differ=$((differ + 1)); echo "DIFF trace: $label"; return
        fi
    fi
    rm -f "$work"/trace.*
}

for ptx in tests/kernels/*.ptx; do
    name="$(basename "$ptx" .ptx)"
    ron="tests/kernels/$name.ron"
    [ -f "$ron" ] || continue
    for mem in flat cached; do
        if [ "$mem" = cached ] && [[ "$name" =~ $skip ]]; then continue; fi
        for sched in round-robin random:7; do
            compare "run $name --memory $mem --schedule $sched" \
                run "$ptx" --launch "$ron" --memory "$mem" --schedule "$sched" \
                --format json --trace @TRACE@
        done
    done
done

for t in tests/litmus/families/*.litmus; do
    for mem in flat cached; do
        compare "litmus $(basename "$t") --memory $mem" litmus "$t" --memory "$mem" --format json \
            --max-states "$max_states"
    done
done

echo "compared $compared, differ $differ, timed out (inconclusive) $timeouts"
[ "$differ" = 0 ]
