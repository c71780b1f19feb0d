#!/usr/bin/env bash
# regen-ptx.sh: regenerate every .ptx of the corpus from its CUDA source.
#
#   scripts/regen-ptx.sh            # all of tests/kernels/{,race/,debug/,programs/}*.cu and tests/thesis/*.cu
#   scripts/regen-ptx.sh FILE.cu…   # only these
#
# Each X.cu is compiled for the device only, without the CUDA SDK, to X.ptx beside it:
#
#   clang --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70 -O2 -S X.cu -o X.ptx
#
# The kernels include cudasem's shipped CUDA header (cuda-front/src/cudasem_cuda.h: the standard
# names, built from clang builtins) instead of the CUDA headers; its folder and tests/kernels are
# on the include path.
#
# Per-file PTX features: clang 14 defaults to PTX ISA 6.0 for sm_70 without a CUDA installation and
# refuses the warp intrinsics (__nvvm_vote_*_sync, __nvvm_shfl_sync_*) unless a PTX feature is
# enabled. A .cu file asks for features with a marker line anywhere in the file:
#
#   // cudasem: ptx-features=+ptx64
#
# (comma separated, e.g. `+ptx64,+sm_70`); each feature becomes
# `-Xclang -target-feature -Xclang FEATURE`. This also changes the `.version` line of the PTX.
#
# Per-file optimisation and debug flags replace the default `-O2` with a marker line:
#
#   // cudasem: clang-flags=-O1 -gline-tables-only -fdebug-compilation-dir=.
#
# (the rest of the line, split at spaces; the debugger's source-line tests need `.loc` lines).
#
# Per-file target architecture (default sm_70) with a marker line, for instructions of newer
# GPUs (mma.m16n8k16, cp.async, ldmatrix need sm_80):
#
#   // cudasem: gpu-arch=sm_80
#
# The compiler: $CLANG if set, else the first of clang, clang-14, clang-19 … on PATH. The output is
# deterministic: running the script twice gives byte-identical files (nothing in clang's PTX
# depends on the time or the path, and we compile with the file's directory as the working
# directory and a relative file name).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

find_clang() {
    if [[ -n "${CLANG:-}" ]]; then
        echo "$CLANG"
        return
    fi
    local c
    for c in clang clang-14 clang-15 clang-16 clang-17 clang-18 clang-19 clang-20; do
        if command -v "$c" >/dev/null 2>&1; then
            echo "$c"
            return
        fi
    done
    echo "regen-ptx.sh: no clang found (set CLANG=...)" >&2
    exit 1
}

clang_bin="$(find_clang)"

if [[ $# -gt 0 ]]; then
    files=("$@")
else
    shopt -s nullglob
    files=("$root"/tests/kernels/*.cu "$root"/tests/kernels/race/*.cu "$root"/tests/kernels/debug/*.cu "$root"/tests/kernels/programs/*.cu
        "$root"/tests/thesis/*.cu)
fi

status=0
for f in "${files[@]}"; do
    dir="$(cd "$(dirname "$f")" && pwd)"
    base="$(basename "$f" .cu)"
    features=()
    marker="$(grep -o 'cudasem: ptx-features=[^[:space:]]*' "$f" | head -n1 | cut -d= -f2 || true)"
    if [[ -n "$marker" ]]; then
        IFS=',' read -r -a feats <<<"$marker"
        for feat in "${feats[@]}"; do
            features+=(-Xclang -target-feature -Xclang "$feat")
        done
    fi
    arch="$(grep -o 'cudasem: gpu-arch=sm_[0-9a-z]*' "$f" | head -n1 | cut -d= -f2 || true)"
    arch="${arch:-sm_70}"
    opt=(-O2)
    flags_marker="$(grep -o 'cudasem: clang-flags=.*$' "$f" | head -n1 | cut -d= -f2- || true)"
    if [[ -n "$flags_marker" ]]; then
        read -r -a opt <<<"$flags_marker"
    fi
    if (cd "$dir" && "$clang_bin" --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch="$arch" "${opt[@]}" \
        -I "$root/tests/kernels" -I "$root/cuda-front/src" "${features[@]}" -S "$base.cu" -o "$base.ptx.tmp"); then
        mv "$dir/$base.ptx.tmp" "$dir/$base.ptx"
        echo "regen-ptx.sh: $dir/$base.ptx"
    else
        rm -f "$dir/$base.ptx.tmp"
        echo "regen-ptx.sh: FAILED $f" >&2
        status=1
    fi
done
exit $status
