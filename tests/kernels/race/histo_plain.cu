// histo_plain: T-S2-3v: B[t]++ instead of atomic_inc. Verdict: RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void histo_plain(const int *A, int *out) {
    __shared__ int B[16];
    unsigned tid = threadIdx.x;
    if (tid < 16)
        B[tid] = 0;
    __syncthreads();
    int t = A[tid];
    B[t]++;
    __syncthreads();
    if (tid < 16)
        out[tid] = B[tid];
}
