// warp_uniform_barriers: D2, T-S3-3 with a warp-uniform condition: 64 threads, two warps, each
// warp at a different barrier. The per-warp mask check passes; seed 001's β check does not.
// Verdict: BARRIER-DIVERGENCE.
#include "cudasem_cuda.h"

extern "C" __global__ void warp_uniform_barriers(int *out) {
    unsigned tid = threadIdx.x;
    if (tid < 32) {
        out[tid] = 1;
        asm volatile("bar.sync 0; // then" ::: "memory");
        out[tid] += 10;
    } else {
        out[tid] = 2;
        asm volatile("bar.sync 0; // else" ::: "memory");
        out[tid] += 20;
    }
}
