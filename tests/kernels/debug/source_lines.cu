// source_lines: a kernel compiled with line tables, so that its PTX keeps `.loc` directives
// that point back at this file: the debugger's source-line breakpoints (`break
// source_lines.cu:LINE`, `until LINE`) are tested on it. Each thread folds in[i] of its neighbours'
// inputs in a loop whose trip count differs per lane (divergence) and stores the result, negated
// (on a path of its own) for even in[i].
// The tests find lines by the markers in the comments (`// @name`), never by number.
//
// scripts/regen-ptx.sh compiles it with the flags of this marker instead of -O2 (the line
// numbers of the `.loc` lines are this file's: keep the header's length when editing it):
// cudasem: clang-flags=-O1 -gline-tables-only -fdebug-compilation-dir=.
#include "cudasem_cuda.h"

extern "C" __global__ void source_lines(int *out, const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; // @index
    if (i >= n) {
        return;
    }
    int v = in[i]; // @load
    int acc = 0;
    for (int k = 0; k < v; ++k) { // @loop
        acc = acc * 3 + in[(i + k) % n]; // @body
    }
    if (v % 2 == 0) {
        out[i] = -acc; // @even
        return;
    }
    out[i] = acc; // @store
}
