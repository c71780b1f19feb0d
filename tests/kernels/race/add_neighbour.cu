// add_neighbour: T-S3-1 (seed 004 Fig. 2). Verdict: RACE with offset 1, NO-RACE with offset 0.
#include "cudasem_cuda.h"

extern "C" __global__ void add_neighbour(int *out, int offset) {
    __shared__ int A[65];
    unsigned tid = threadIdx.x;
    A[tid] = tid;
    if (tid == 0)
        A[64] = 64;
    __syncthreads();
    A[tid] = A[tid] + A[tid + offset];
    __syncthreads();
    out[tid] = A[tid];
}
