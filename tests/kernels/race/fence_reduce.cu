// fence_reduce: the last-block reduction (CUDA SDK threadFenceReduction) WITHOUT __threadfence():
// the last block's thread 0 reads partial[b] written by other blocks with nothing ordering them.
// Verdict: RACE (inter-block; missing fence). Twin: fence_reduce_fixed.
#include "cudasem_cuda.h"

extern "C" __global__ void fence_reduce(const int *in, int *partial, int *count, int *out) {
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
        last = atomicAdd(count, 1) == (int)gridDim.x - 1;
    }
    asm volatile("bar.sync 0;" ::: "memory");
    if (last && tid == 0) {
        int total = 0;
        for (unsigned b = 0; b < gridDim.x; b++)
            total += partial[b];
        out[0] = total;
    }
}
