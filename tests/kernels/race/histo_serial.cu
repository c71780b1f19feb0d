// histo_serial: T-S2-4 (seed 002 Fig. 2b): histogram serialised by barriers. Verdict: NO-RACE, no
// barrier divergence.
#include "cudasem_cuda.h"

extern "C" __global__ void histo_serial(const int *A, int *out) {
    __shared__ int B[16];
    unsigned tid = threadIdx.x;
    if (tid < 16)
        B[tid] = 0;
    __syncthreads();
    int t = A[tid];
    for (unsigned j = 0; j < blockDim.x; j++) {
        if (tid == j)
            B[t]++;
        __syncthreads();
    }
    __syncthreads();
    if (tid < 16)
        out[tid] = B[tid];
}
