// fence_reduce: the last-block reduction (CUDA SDK threadFenceReduction) WITHOUT __threadfence():
// the last block's thread 0 reads partial[b] written by other blocks with nothing ordering them.
// Verdict: RACE (inter-block; missing fence). Twin: fence_reduce_fixed.
#include "race_min.h"

extern "C" __global__ void fence_reduce(const int *in, int *partial, int *count, int *out) {
    __shared__ int s[64];
    __shared__ int last;
    unsigned tid = threadIdx_x;
    s[tid] = in[blockIdx_x * blockDim_x + tid];
    __syncthreads();
    for (unsigned stride = blockDim_x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx_x] = s[0];
        last = atomicAdd(count, 1) == (int)gridDim_x - 1;
    }
    SYNCTHREADS();
    if (last && tid == 0) {
        int total = 0;
        for (unsigned b = 0; b < gridDim_x; b++)
            total += partial[b];
        out[0] = total;
    }
}
