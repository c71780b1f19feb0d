// histo_atomic: T-S2-3 (seed 002 Fig. 2a): buckets updated atomically. Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void histo_atomic(const int *A, int *out) {
    __shared__ int B[16];
    unsigned tid = threadIdx.x;
    if (tid < 16)
        B[tid] = 0;
    __syncthreads();
    int t = A[tid];
    atomicAdd(&B[t], 1);
    __syncthreads();
    if (tid < 16)
        out[tid] = B[tid];
}
