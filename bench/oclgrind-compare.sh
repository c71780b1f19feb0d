#!/usr/bin/env bash
# Compares cudasem's `run` with Oclgrind (a simulator of OpenCL devices) on the same three
# computations, each 65,536 threads / work-items:
#   alu     an integer hash loop          tests/kernels/bench_alu.*    tests/opencl/bench_alu.*
#   matmul  a tiled f32 matrix multiply   tests/kernels/bench_matmul.* tests/opencl/bench_matmul.*
#   reduce  a shared-memory tree reduction tests/kernels/bench_reduce.* tests/opencl/bench_reduce.*
# Pair by pair, REPS times each (default 3): `oclgrind-kernel --num-threads 1 X.sim` and
# `cudasem run X.ptx --launch X.ron --format json --schedule round-robin` (release build), wall
# times measured here; prints the median of each, the ratio cudasem / Oclgrind, cudasem's step
# count, and whether the two outputs agree element for element.
#
# Usage: bench/oclgrind-compare.sh [REPS] [KERNEL...]     (e.g. bench/oclgrind-compare.sh 1 alu)
# Needs python3 (standard library only) and oclgrind (installed with apt-get when run as root).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

reps="${1:-3}"
shift || true
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then kernels=(alu matmul reduce); fi

if ! command -v oclgrind-kernel >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        echo "oclgrind-kernel missing: installing oclgrind" >&2
        apt-get update -qq >/dev/null && apt-get install -y -qq oclgrind >/dev/null
    else
        echo "error: oclgrind-kernel not found; install the oclgrind package (apt-get install oclgrind)" >&2
        exit 2
    fi
fi

cargo build --release -q -p cli
cudasem="$root/target/release/cudasem"

exec python3 - "$root" "$cudasem" "$reps" "${kernels[@]}" <<'PY'
import json, os, re, statistics, subprocess, sys, time

root, cudasem, reps, kernels = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
# The buffer each kernel leaves its result in (the launch files print none for the big ones).
OUTPUT = {"alu": "out", "matmul": "C", "reduce": "out"}

def timed(cmd, cwd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return elapsed, proc.stdout

def oclgrind_values(text, name):
    # Oclgrind dumps `  name[i] = value` lines after `Argument 'name': N bytes`.
    values = {}
    for m in re.finditer(r"^\s*" + re.escape(name) + r"\[(\d+)\]\s*=\s*(\S+)", text, re.M):
        values[int(m.group(1))] = float(m.group(2))
    return [values[i] for i in sorted(values)]

rows = []
for k in kernels:
    if k not in OUTPUT:
        sys.exit(f"error: unknown kernel {k} (alu, matmul or reduce)")
    out = OUTPUT[k]
    ocl_times, sem_times = [], []
    ocl_text = sem_json = None
    for r in range(reps):
        t, ocl_text = timed(["oclgrind-kernel", "--num-threads", "1", f"bench_{k}.sim"], os.path.join(root, "tests", "opencl"))
        ocl_times.append(t)
        t, text = timed([cudasem, "run", f"tests/kernels/bench_{k}.ptx", "--launch", f"tests/kernels/bench_{k}.ron",
                         "--format", "json", "--schedule", "round-robin", "--print", out], root)
        sem_times.append(t)
        sem_json = json.loads(text)
        print(f"  {k} rep {r + 1}: oclgrind {ocl_times[-1]:.2f} s, cudasem {sem_times[-1]:.2f} s", file=sys.stderr)
    if sem_json["status"] != "completed":
        agree = f"cudasem: {sem_json['status']}"
    else:
        a = oclgrind_values(ocl_text, out)
        b = [float(x) for x in sem_json["buffers"][out]]
        if len(a) != len(b):
            agree = f"no ({len(a)} vs {len(b)} elements)"
        else:
            bad = sum(1 for x, y in zip(a, b) if x != y)
            agree = "yes" if bad == 0 else f"no ({bad} differ)"
    o, s = statistics.median(ocl_times), statistics.median(sem_times)
    rows.append((k, o, s, s / o, sem_json["steps"], agree))

print(f"\nOclgrind vs cudasem, 65,536 threads each, median of {reps} (wall seconds; oclgrind --num-threads 1;"
      " cudasem release, simt-stack, flat memory, round-robin)\n")
print(f"| {'kernel':<7} | {'oclgrind s':>10} | {'cudasem s':>9} | {'cudasem/oclgrind':>16} | {'cudasem steps':>13} | outputs agree |")
print(f"|{'-' * 9}|{'-' * 12}|{'-' * 11}|{'-' * 18}|{'-' * 15}|---------------|")
for k, o, s, ratio, steps, agree in rows:
    print(f"| {k:<7} | {o:>10.2f} | {s:>9.2f} | {ratio:>16.2f} | {steps:>13} | {agree} |")
PY
