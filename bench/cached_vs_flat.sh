#!/usr/bin/env bash
# Side by side: `cudasem run --memory flat` and `--memory cached` (thesis chapter 4) on the same
# launch, round-robin schedule, release build. For each launch prints the wall and user CPU
# seconds of both runs, their step counts, microseconds per step and the ratio cached / flat.
# Issue 15's goal is cached at most 5x flat on the three 65,536-thread kernels.
#
# Usage: bench/cached_vs_flat.sh [--bin PATH] [--timeout SECONDS] [--] [KERNEL[:LAUNCH.ron]...]
#   KERNEL is a name in tests/kernels (default: bench_alu bench_reduce bench_matmul, full size);
#   :LAUNCH.ron runs that launch file instead of the kernel's own (e.g. a smaller grid).
#   --bin: the cudasem binary (default: target/release/cudasem, built if missing);
#   --timeout: per run (default 600); a cut run prints its steps and "cut" instead of a ratio.
# Extra cached options may be given in CACHED_OPTS (e.g. CACHED_OPTS="--silent none").
# Needs python3 (standard library only).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bin="${CARGO_TARGET_DIR:-$root/target}/release/cudasem"
timeout=600
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --) shift; break ;;
        *) break ;;
    esac
done
specs=("$@")
if [ ${#specs[@]} -eq 0 ]; then specs=(bench_alu bench_reduce bench_matmul); fi

if [ ! -x "$bin" ]; then
    echo "building cudasem (release)" >&2
    cargo build --release -p cli >&2
fi

# One run: prints "wall user steps status".
one() {
    local ptx="$1" ron="$2" mem="$3"
    local out
    out="$(mktemp)"
    local extra=()
    if [ "$mem" = cached ]; then
        # shellcheck disable=SC2206
        extra=(${CACHED_OPTS:-})
    fi
    python3 - "$bin" "$ptx" "$ron" "$mem" "$timeout" "$out" "${extra[@]}" <<'PY'
import json, os, resource, subprocess, sys, time
bin_, ptx, ron, mem, timeout, out = sys.argv[1:7]
extra = sys.argv[7:]
cmd = [bin_, "run", ptx, "--launch", ron, "--memory", mem, "--format", "json",
       "--timeout", timeout] + extra
t0 = time.monotonic()
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
wall = time.monotonic() - t0
user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
try:
    d = json.loads(p.stdout)
    steps, status = d.get("steps", 0), d.get("status", "?")
except ValueError:
    steps, status = 0, "error:" + p.stderr.strip().splitlines()[-1][:60] if p.stderr.strip() else "error"
print(f"{wall:.3f} {user:.3f} {steps} {status}")
PY
    rm -f "$out"
}

printf '%-28s %-7s %9s %9s %11s %8s %10s  %s\n' launch memory wall_s user_s steps us/step ratio status
for spec in "${specs[@]}"; do
    name="${spec%%:*}"
    ron="tests/kernels/$name.ron"
    if [ "$spec" != "$name" ]; then ron="${spec#*:}"; fi
    ptx="tests/kernels/$name.ptx"
    read -r fw fu fs fst < <(one "$ptx" "$ron" flat)
    read -r cw cu cs cst < <(one "$ptx" "$ron" cached)
    label="$name:$(basename "$ron" .ron)"
    python3 - "$label" "$fw" "$fu" "$fs" "$fst" "$cw" "$cu" "$cs" "$cst" <<'PY'
import sys
label, fw, fu, fs, fst, cw, cu, cs, cst = sys.argv[1:]
fw, fu, cw, cu = map(float, (fw, fu, cw, cu))
fs, cs = int(fs), int(cs)
def row(mem, w, u, s, st, ratio):
    ups = f"{u / s * 1e6:.3f}" if s else "-"
    print(f"{label:<28} {mem:<7} {w:9.2f} {u:9.2f} {s:11d} {ups:>8} {ratio:>10}  {st}")
row("flat", fw, fu, fs, fst, "")
ratio = f"{cu / fu:.1f}x" if cst == "completed" and fst == "completed" and fu > 0 else "cut"
row("cached", cw, cu, cs, cst, ratio)
PY
done
