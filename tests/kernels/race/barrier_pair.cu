// barrier_pair: T-S3-3 (seed 004): `if (tid == 0) barrier(); else barrier();`, with different work on
// each side so the compiler keeps two barriers. Verdict: BARRIER-DIVERGENCE.
#include "cudasem_cuda.h"

extern "C" __global__ void barrier_pair(int *out) {
    unsigned tid = threadIdx.x;
    if (tid == 0) {
        out[tid] = 1;
        asm volatile("bar.sync 0; // then" ::: "memory");
        out[tid] += 10;
    } else {
        out[tid] = 2;
        asm volatile("bar.sync 0; // else" ::: "memory");
        out[tid] += 20;
    }
}
