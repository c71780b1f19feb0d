#!/usr/bin/env bash
# Two cudasem binaries, the same litmus tests: are the outcome sets equal? For a change of the
# memory engine that must keep its behaviours (issue 15: folded micro steps, lazy silent
# rules): every test that both binaries explore completely must reach the same outcomes (by
# their text, e.g. "1:r1=1; 1:r2=0;") and agree on whether deadlocks and faults occur.
# Prints one line per difference and a summary; exits 1 if any test differs.
#
# Usage: bench/litmus-same-outcomes.sh --before BIN --after BIN [--memory cached]
#          [--timeout SECONDS] [--max-states N] [--suite DIR] [--] [FOLDER...]
#   FOLDER: a folder of the suite (default: Manual Barrier Nvidia), searched recursively;
#   --suite: the ptx-litmus folder (default: $CUDASEM_CONFORMANCE/ptx-litmus);
#   --timeout (default 30) and --max-states (default 1000000): per test and binary.
# Needs python3 (standard library only).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
before="" after="" memory=cached timeout=30 max_states=1000000 suite=""
while [ $# -gt 0 ]; do
    case "$1" in
        --before) before="$2"; shift 2 ;;
        --after) after="$2"; shift 2 ;;
        --memory) memory="$2"; shift 2 ;;
        --timeout) timeout="$2"; shift 2 ;;
        --max-states) max_states="$2"; shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        --) shift; break ;;
        -*) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ -z "$before" ] || [ -z "$after" ]; then
    echo "give --before BIN and --after BIN (see the header of $0)" >&2
    exit 2
fi
if [ -z "$suite" ]; then suite="${CUDASEM_CONFORMANCE:-$root/../shared/conformance}/ptx-litmus"; fi
if [ ! -d "$suite" ]; then
    echo "no litmus suite at $suite (set CUDASEM_CONFORMANCE or pass --suite DIR)" >&2
    exit 2
fi
folders=("$@")
if [ ${#folders[@]} -eq 0 ]; then folders=(Manual Barrier Nvidia); fi

exec python3 - "$before" "$after" "$memory" "$timeout" "$max_states" "$suite" "${folders[@]}" <<'PY'
import json, os, subprocess, sys
before, after, memory, limit, max_states, suite = sys.argv[1:7]
folders = sys.argv[7:]

def run(binary, path):
    cmd = [binary, "litmus", path, "--memory", memory, "--format", "json",
           "--max-states", max_states, "--timeout", limit]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=float(limit) + 15)
        r = json.loads(p.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    if r.get("status") != "ok":
        return None
    return (frozenset(o["outcome"] for o in r.get("outcomes", [])),
            r.get("deadlocks", 0) > 0, r.get("faults", 0) > 0, r.get("states", 0))

compared = differ = skipped = 0
sb = sa = 0
for folder in folders:
    for dirpath, _, files in sorted(os.walk(os.path.join(suite, folder))):
        for f in sorted(files):
            if not f.endswith(".litmus"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, suite)
            b, a = run(before, path), run(after, path)
            if b is None or a is None:
                skipped += 1
                continue
            compared += 1
            sb += b[3]; sa += a[3]
            if b[:3] != a[:3]:
                differ += 1
                print(f"DIFFER {rel}: before {sorted(b[0])} deadlocks {b[1]} faults {b[2]}; "
                      f"after {sorted(a[0])} deadlocks {a[1]} faults {a[2]}")
print(f"{compared} tests complete under both: {differ} differ; {skipped} not complete under "
      f"one of them (or refused); states {sb} before, {sa} after")
sys.exit(1 if differ else 0)
PY
