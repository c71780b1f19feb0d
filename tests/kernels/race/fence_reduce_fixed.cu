// fence_reduce_fixed: fence_reduce with a __threadfence() before the counter's atomic (release)
// and one after it in the last block (acquire), the PTX memory model's fence patterns.
// Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void fence_reduce_fixed(const int *in, int *partial, int *count, int *out) {
    __shared__ int s[64];
    __shared__ int last;
    unsigned tid = threadIdx.x;
    s[tid] = in[blockIdx.x * blockDim.x + tid];
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        last = atomicAdd(count, 1) == (int)gridDim.x - 1;
    }
    asm volatile("bar.sync 0;" ::: "memory");
    if (last && tid == 0) {
        __threadfence();
        int total = 0;
        for (unsigned b = 0; b < gridDim.x; b++)
            total += partial[b];
        out[0] = total;
    }
}
