// divergent_syncthreads: __syncthreads() inside a divergent if (its other side has another one).
// Verdict: BARRIER-DIVERGENCE, reported with both sites.
#include "cudasem_cuda.h"

extern "C" __global__ void divergent_syncthreads(int *out) {
    __shared__ int s[64];
    unsigned tid = threadIdx.x;
    if (tid % 2 == 0) {
        s[tid] = 1;
        asm volatile("bar.sync 0; // then" ::: "memory");
        out[tid] = s[tid + 1];
    } else {
        s[tid] = 2;
        asm volatile("bar.sync 0; // else" ::: "memory");
        out[tid] = s[tid - 1];
    }
}
