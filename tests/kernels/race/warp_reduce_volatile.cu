// warp_reduce_volatile: warp_reduce through a volatile pointer (volatile accesses are strong:
// relaxed.sys in the PTX memory model). Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void warp_reduce_volatile(const int *in, int *out) {
    __shared__ int s[64];
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * 64 + tid];
    __syncthreads();
    if (tid < 32) {
        volatile int *vs = s;
        vs[tid] += vs[tid + 32];
        vs[tid] += vs[tid + 16];
        vs[tid] += vs[tid + 8];
        vs[tid] += vs[tid + 4];
        vs[tid] += vs[tid + 2];
        vs[tid] += vs[tid + 1];
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}
