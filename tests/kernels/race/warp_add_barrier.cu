// warp_add_barrier: T-S2-2 (seed 002 Fig. 1b): the race eliminated by a barrier. Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void warp_add_barrier(const float *in, float *out) {
    __shared__ float A[64];
    unsigned tid = threadIdx.x;
    unsigned N = blockDim.x;
    A[tid] = in[tid];
    __syncthreads();
    float temp = A[(tid + 1) % N];
    __syncthreads();
    A[tid] = A[tid] + temp;
    __syncthreads();
    out[tid] = A[tid];
}
