// atomic_indices: T-S2-8 (seed 002 Fig. 3): atomic increments hand out disjoint indices.
// Verdict: NO-RACE (concretely; GPUVerify's basic abstraction reports a false write-write race).
#include "cudasem_cuda.h"

extern "C" __global__ void atomic_indices(const int *in, int *out, int max) {
    __shared__ int c;
    if (threadIdx.x == 0)
        c = 0;
    __syncthreads();
    int i = atomicAdd(&c, 1);
    while (i < max) {
        out[i] = in[i] * 2;
        i = atomicAdd(&c, 1);
    }
}
