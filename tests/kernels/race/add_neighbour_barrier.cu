// add_neighbour_barrier: T-S3-2 (seed 004 Fig. 3). Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void add_neighbour_barrier(int *out, int offset) {
    __shared__ int A[65];
    unsigned tid = threadIdx.x;
    A[tid] = tid;
    if (tid == 0)
        A[64] = 64;
    __syncthreads();
    int temp = A[tid + offset];
    __syncthreads();
    A[tid] = A[tid] + temp;
    __syncthreads();
    out[tid] = A[tid];
}
