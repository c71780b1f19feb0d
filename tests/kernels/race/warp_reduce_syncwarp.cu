// warp_reduce_syncwarp: warp_reduce with __syncwarp() between each read and write.
// Verdict: NO-RACE.
// cudasem: ptx-features=+ptx64
#include "cudasem_cuda.h"

extern "C" __global__ void warp_reduce_syncwarp(const int *in, int *out) {
    __shared__ int s[64];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 64 + tid];
    __syncthreads();
    if (tid < 32) {
        int v;
        v = s[tid] + s[tid + 32];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
        v = s[tid] + s[tid + 16];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
        v = s[tid] + s[tid + 8];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
        v = s[tid] + s[tid + 4];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
        v = s[tid] + s[tid + 2];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
        v = s[tid] + s[tid + 1];
        __syncwarp();
        s[tid] = v;
        __syncwarp();
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}
