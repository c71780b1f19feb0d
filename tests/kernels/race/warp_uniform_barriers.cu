// warp_uniform_barriers: D2, T-S3-3 with a warp-uniform condition: 64 threads, two warps, each
// warp at a different barrier. The per-warp mask check passes; seed 001's β check does not.
// Verdict: BARRIER-DIVERGENCE.
#include "race_min.h"

extern "C" __global__ void warp_uniform_barriers(int *out) {
    unsigned tid = threadIdx_x;
    if (tid < 32) {
        out[tid] = 1;
        BARRIER_AT(then);
        out[tid] += 10;
    } else {
        out[tid] = 2;
        BARRIER_AT(else);
        out[tid] += 20;
    }
}
