// divergent_syncthreads: __syncthreads() inside a divergent if (its other side has another one).
// Verdict: BARRIER-DIVERGENCE, reported with both sites.
#include "race_min.h"

extern "C" __global__ void divergent_syncthreads(int *out) {
    __shared__ int s[64];
    unsigned tid = threadIdx_x;
    if (tid % 2 == 0) {
        s[tid] = 1;
        BARRIER_AT(then);
        out[tid] = s[tid + 1];
    } else {
        s[tid] = 2;
        BARRIER_AT(else);
        out[tid] = s[tid - 1];
    }
}
