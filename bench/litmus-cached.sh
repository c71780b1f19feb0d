#!/usr/bin/env bash
# The PTX memory-model litmus suite under `--memory flat` and `--memory cached`, side by side
# (issue 15: soundness, completeness and the state cost of the cached memory of thesis
# chapter 4). Every test of each folder runs under both memories with a per-test time limit
# and prints, per folder, how many tests
#   agree        finished, and the outcome the test asks about is reached exactly when the
#                model allows it; or the model allows it and cudasem did not reach it
#                ("allowed, not reached": incomplete but sound; counted apart in `miss`)
#   incomplete   hit the state bound or the time limit, no verdict (a bounded search that
#                already reached a forbidden outcome is WRONG)
#   unsupported  the litmus translator refused it (proxies, ...)
#   WRONG        reached an outcome the PTX model forbids
#   no-csv       no expected result in PTXv6_0-expected.csv / PTXv7_5-expected.csv
# with the total distinct states and seconds of each memory, and the median and largest
# cached/flat state ratio over the tests both memories finished (issue 15's goal: within 10x).
# A per-test table (tab-separated) is written with --tsv FILE.
#
# The model's verdicts are Dat3M's expected CSVs (`exists`: 1 = the outcome is allowed;
# `~exists`/`forall`: 1 = the condition holds in every execution), read as in
# litmus/tests/litmus_conformance.rs.
#
# Usage: bench/litmus-cached.sh [--bin PATH] [--timeout SECONDS] [--max-states N] [--jobs J]
#                               [--max-memory BYTES] [--suite DIR] [--tsv FILE] [--] [FOLDER...]
#   FOLDER: a folder of the suite (default: Manual Barrier Nvidia), searched recursively;
#   --suite: the ptx-litmus folder (default: $CUDASEM_CONFORMANCE/ptx-litmus, else
#            ../shared/conformance/ptx-litmus next to the workspace);
#   --bin: the cudasem binary (default: target/release/cudasem, built if missing);
#   --timeout: per test and memory (default 30); --max-states: per test (default 1000000);
#   --jobs: tests run in parallel (default 1; times are per test, wall clock);
#   --max-memory: per run (cudasem's --max-memory; default: cudasem's, half of the machine,
#            which parallel jobs must divide).
# Needs python3 (standard library only).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bin="${CARGO_TARGET_DIR:-$root/target}/release/cudasem"
timeout=30
max_states=1000000
jobs=1
suite=""
tsv=""
max_memory=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bin) bin="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --max-states) max_states="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        --tsv) tsv="$2"; shift 2 ;;
        --max-memory) max_memory="$2"; shift 2 ;;
        --) shift; break ;;
        -*) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ -z "$suite" ]; then
    if [ -n "${CUDASEM_CONFORMANCE:-}" ]; then
        suite="$CUDASEM_CONFORMANCE/ptx-litmus"
    else
        suite="$root/../shared/conformance/ptx-litmus"
    fi
fi
if [ ! -d "$suite" ]; then
    echo "no litmus suite at $suite (set CUDASEM_CONFORMANCE or pass --suite DIR)" >&2
    exit 2
fi
folders=("$@")
if [ ${#folders[@]} -eq 0 ]; then folders=(Manual Barrier Nvidia); fi

if [ ! -x "$bin" ]; then
    echo "building cudasem (release)" >&2
    cargo build --release -p cli >&2
fi

exec python3 - "$bin" "$timeout" "$max_states" "$jobs" "$suite" "$tsv" "$max_memory" "${folders[@]}" <<'PY'
import json, os, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor

binary, limit, max_states, jobs, suite, tsv, max_memory = sys.argv[1:8]
folders = sys.argv[8:]
limit, max_states, jobs = float(limit), int(max_states), int(jobs)

def expected(csv):
    out = {}
    try:
        text = open(os.path.join(suite, csv)).read()
    except OSError:
        return out
    for line in text.splitlines():
        path, _, v = line.strip().rpartition(",")
        if path.startswith("litmus/PTX/"):
            out[path[len("litmus/PTX/"):]] = v.strip() == "1"
    return out

v6, v75 = expected("PTXv6_0-expected.csv"), expected("PTXv7_5-expected.csv")

def run(path, memory):
    """One test under one memory: (status, reached, states, seconds, quantifier)."""
    cmd = [binary, "litmus", path, "--memory", memory, "--format", "json",
           "--max-states", str(max_states), "--timeout", str(limit)]
    if max_memory:
        cmd += ["--max-memory", max_memory]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 15)
    except subprocess.TimeoutExpired:
        return ("killed", None, 0, time.monotonic() - start, None)
    seconds = time.monotonic() - start
    try:
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return ("error", None, 0, seconds, None)
    status = r.get("status")
    q = r.get("condition", "").split(" ")[0]
    # The outcome the test talks about: `exists P` / `~exists P`: one satisfying P; `forall P`:
    # one violating P.
    def talks_about(o):
        return o.get("satisfies") if q != "forall" else not o.get("satisfies")
    reached = any(talks_about(o) for o in r.get("outcomes", []))
    return (status, reached, r.get("states", 0), seconds, q)

def verdict(model_allows, result):
    status, reached = result[0], result[1]
    if status == "unsupported":
        return "unsupported"
    if model_allows is None:
        return "no-csv"
    if reached and not model_allows:
        return "WRONG"
    if status != "ok":
        return "incomplete"
    return "agree" if reached == model_allows else "miss"

tests = []
for folder in folders:
    base = os.path.join(suite, folder)
    for dirpath, _, files in sorted(os.walk(base)):
        for f in sorted(files):
            if f.endswith(".litmus"):
                full = os.path.join(dirpath, f)
                tests.append((folder, os.path.relpath(full, suite), full))

def one(t):
    folder, rel, full = t
    flat = run(full, "flat")
    cached = run(full, "cached")
    return (folder, rel, flat, cached)

with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
    results = list(ex.map(one, tests))

cols = ["agree", "miss", "incomplete", "unsupported", "WRONG", "no-csv"]
rows, ratios, wrong = [], [], []
per = {}
for folder, rel, flat, cached in results:
    # `exists` with 1 / `~exists`,`forall` with 0: the outcome talked about is allowed.
    q = flat[4] or cached[4]
    model = v6.get(rel, v75.get(rel))
    allows = None
    if model is not None and q is not None:
        allows = model if q == "exists" else not model
    vf, vc = verdict(allows, flat), verdict(allows, cached)
    d = per.setdefault(folder, {"flat": dict.fromkeys(cols, 0), "cached": dict.fromkeys(cols, 0),
                                 "states": [0, 0], "time": [0.0, 0.0]})
    d["flat"][vf] += 1
    d["cached"][vc] += 1
    d["states"][0] += flat[2]; d["states"][1] += cached[2]
    d["time"][0] += flat[3]; d["time"][1] += cached[3]
    if flat[0] == "ok" and cached[0] == "ok" and flat[2] > 0:
        ratios.append((cached[2] / flat[2], rel))
    if "WRONG" in (vf, vc):
        wrong.append(f"{rel}: flat {vf}, cached {vc}")
    rows.append((rel, allows, vf, flat[0], flat[2], flat[3], vc, cached[0], cached[2], cached[3]))

print(f"# PTX litmus suite, flat vs cached memory ({limit:g} s and {max_states} states per test)\n")
hdr = "| folder | memory | tests | " + " | ".join(cols) + " | states | seconds |"
print(hdr)
print("|" + "---|" * (len(cols) + 5))
for folder in folders:
    d = per.get(folder)
    if d is None:
        continue
    for i, mem in enumerate(["flat", "cached"]):
        n = sum(d[mem].values())
        cells = " | ".join(str(d[mem][c]) for c in cols)
        print(f"| {folder} | {mem} | {n} | {cells} | {d['states'][i]} | {d['time'][i]:.1f} |")
print()
print("agree: verdict as the model; miss: the model allows the outcome, cudasem did not reach it")
print("(complete search); incomplete: state bound or time limit hit; WRONG: a forbidden outcome.")
if ratios:
    rs = sorted(r for r, _ in ratios)
    top = max(ratios)
    print(f"\ncached/flat states over {len(rs)} tests both finished: median {statistics.median(rs):.1f}x, "
          f"largest {top[0]:.1f}x ({top[1]}), within 10x: {sum(r <= 10 for r in rs)}")
print("\nWRONG: " + ("none" if not wrong else "\n  " + "\n  ".join(wrong)))
if tsv:
    with open(tsv, "w") as f:
        f.write("test\tmodel_allows\tflat\tflat_status\tflat_states\tflat_s\tcached\tcached_status\tcached_states\tcached_s\n")
        for r in rows:
            f.write("\t".join(str(x) if not isinstance(x, float) else f"{x:.2f}" for x in r) + "\n")
PY
