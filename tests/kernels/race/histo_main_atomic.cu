// histo_main_atomic: D4 with the read made atomic (atomicAdd of 0). Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void histo_main_atomic(const int *A, int *out) {
    __shared__ int B[16];
    unsigned tid = threadIdx.x;
    if (tid < 16)
        B[tid] = 0;
    __syncthreads();
    int t = A[tid];
    int v = atomicAdd(&B[t], 0);
    atomicAdd(&B[t], 1);
    __syncthreads();
    out[tid] = v;
}
