// loop_break_continue: a loop with a data-dependent trip count (trips[i]) containing both a
// `continue` (skip multiples of 3) and a `break` (when the running sum exceeds limit), so the lanes
// of a warp leave the loop at different iterations and for different reasons.
#include "cudasem_cuda.h"

extern "C" __global__ void loop_break_continue(const int *trips, int *out, int n, int limit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int t = trips[i];
    int acc = 0;
    for (int k = 0; k < t; ++k) {
        if (k % 3 == 0)
            continue;
        acc += k * (i + 1);
        if (acc > limit)
            break;
    }
    out[i] = acc;
}
