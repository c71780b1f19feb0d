#!/usr/bin/env bash
# Are trace files byte for byte what another cudasem writes? Writes the same traces with two
# binaries (`run --trace`, `replay --save` as JSON Lines and RON, `explore --save`, the
# debugger's `trace save`: one-kernel launches from a launch file and from flags, flat and cached
# memory, the three warp models, a program of several launches, a by-value struct argument,
# extern values) and compares each pair. Exit 0 when all are identical, 1 otherwise.
#
# Usage: scripts/trace-identity.sh OLD_CUDASEM NEW_CUDASEM
#   e.g. build main's binary into another target dir and compare it with this checkout's.
set -uo pipefail

[ $# -eq 2 ] || { echo "usage: $0 OLD_CUDASEM NEW_CUDASEM" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
old="$(realpath "$1")"; new="$(realpath "$2")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
K=tests/kernels

write() { # BIN OUT: every trace of the list, written by BIN into OUT
    local B=$1 O=$2
    mkdir -p "$O"
    {
    "$B" run $K/vecadd.ptx --launch $K/vecadd.ron --trace "$O/vecadd_flat.jsonl"
    "$B" run $K/vecadd.ptx --launch $K/vecadd.ron --memory cached --trace "$O/vecadd_cached.jsonl"
    "$B" run $K/extern_call.ptx --launch $K/extern_call.ron --trace "$O/extern.jsonl"
    "$B" run $K/struct_arg.ptx --launch $K/struct_arg.ron --warp-model threads --trace "$O/struct.jsonl"
    "$B" run $K/programs/two_pass_reduce.ptx --launch $K/programs/two_pass_reduce.ron --trace "$O/program.jsonl"
    "$B" run $K/programs/two_pass_reduce.ptx --launch $K/programs/two_pass_reduce.ron --memory cached --warp-model its --trace "$O/program_cached.jsonl"
    "$B" run $K/vecadd.ptx --kernel vecadd --grid 1 --block 4 --buffer a:f32:4:range:1:1 --buffer b:f32:4 --buffer c:f32:4 --arg buffer:a --arg buffer:b --arg buffer:c --arg s32:4 --trace "$O/flags.jsonl"
    for t in vecadd_flat program program_cached flags struct extern; do
        "$B" replay "$O/$t.jsonl" --save "$O/${t}_replayed.ron"
        "$B" replay "$O/$t.jsonl" --save "$O/${t}_replayed.jsonl"
    done
    "$B" explore tests/thesis/listing_6_2.ptx --launch tests/thesis/listing_6_2.ron --save "$O/lasso.ron"
    "$B" explore tests/thesis/listing_6_2.ptx --launch tests/thesis/listing_6_2.ron --memory cached --save "$O/lasso_cached.jsonl"
    printf 'continue\ntrace save %s\nquit\n' "$O/debug_program.jsonl" |
        "$B" debug $K/programs/two_pass_reduce.ptx --launch $K/programs/two_pass_reduce.ron --script -
    printf 'continue\ntrace save %s\nquit\n' "$O/debug_cached.jsonl" |
        "$B" debug $K/vecadd.ptx --launch $K/vecadd.ron --memory cached --script -
    } > "$O.log" 2>&1
}

write "$old" "$work/old"
write "$new" "$work/new"
status=0 n=0
for f in "$work"/old/*; do
    name=$(basename "$f"); n=$((n + 1))
    if ! cmp -s "$f" "$work/new/$name"; then echo "differs: $name"; status=1; fi
done
for f in "$work"/new/*; do
    [ -e "$work/old/$(basename "$f")" ] || { echo "only the new binary wrote $(basename "$f")"; status=1; }
done
[ "$n" -gt 0 ] || { echo "no trace written (see the commands' output)"; cat "$work/old.log"; exit 1; }
[ $status -eq 0 ] && echo "$n trace files, byte for byte the same"
exit $status
