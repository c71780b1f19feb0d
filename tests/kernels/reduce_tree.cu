// reduce_tree: classic shared-memory tree reduction with __syncthreads (bar.sync 0) in a loop
// whose trip count depends on blockDim. Each block writes its partial sum to out[blockIdx.x].
// Works for any power-of-two block size up to 256 and any n (out-of-range elements count 0).
#include "cudasem_cuda.h"

extern "C" __global__ void reduce_tree(const int *in, int *out, int n) {
    __shared__ int s[256];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    s[tid] = (i < (unsigned)n) ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = s[0];
}
