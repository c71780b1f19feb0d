// barrier_pair: T-S3-3 (seed 004): `if (tid == 0) barrier(); else barrier();`, with different work on
// each side so the compiler keeps two barriers. Verdict: BARRIER-DIVERGENCE.
#include "race_min.h"

extern "C" __global__ void barrier_pair(int *out) {
    unsigned tid = threadIdx_x;
    if (tid == 0) {
        out[tid] = 1;
        BARRIER_AT(then);
        out[tid] += 10;
    } else {
        out[tid] = 2;
        BARRIER_AT(else);
        out[tid] += 20;
    }
}
