// warp_add: T-S2-1 (seed 002 Fig. 1a). Verdict: RACE under interleaving; under warp-sync NO-RACE
// with N = 32 (one warp), RACE between threads 31/32 and 63/0 with N = 64 in warps of 32.
#include "cudasem_cuda.h"

extern "C" __global__ void warp_add(const float *in, float *out) {
    __shared__ float A[64];
    unsigned tid = threadIdx.x;
    unsigned N = blockDim.x;
    A[tid] = in[tid];
    __syncthreads();
    A[tid] = A[tid] + A[(tid + 1) % N];
    __syncthreads();
    out[tid] = A[tid];
}
