// foo_idx: T-S3-4 (seed 004 Fig. 5). Verdict: RACE with idx 1, NO-RACE with idx 0.
#include "cudasem_cuda.h"

extern "C" __global__ void foo_idx(int *out, int idx) {
    __shared__ int A[65];
    unsigned tid = threadIdx.x;
    A[tid] = tid;
    if (tid == 0)
        A[64] = 64;
    __syncthreads();
    int x = A[tid + idx];
    int y = A[tid];
    A[tid] = x + y;
    __syncthreads();
    out[tid] = A[tid];
}
