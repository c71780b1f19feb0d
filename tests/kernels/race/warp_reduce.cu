// warp_reduce: the last-warp unrolled reduction without volatile and without __syncwarp().
// Verdict: RACE (intra-warp) under interleaving. Twins: warp_reduce_volatile, warp_reduce_syncwarp.
#include "cudasem_cuda.h"

extern "C" __global__ void warp_reduce(const int *in, int *out) {
    __shared__ int s[64];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 64 + tid];
    __syncthreads();
    if (tid < 32) {
        s[tid] += s[tid + 32];
        s[tid] += s[tid + 16];
        s[tid] += s[tid + 8];
        s[tid] += s[tid + 4];
        s[tid] += s[tid + 2];
        s[tid] += s[tid + 1];
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}
