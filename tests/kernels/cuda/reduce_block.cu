// reduce_block: every block sums its slice of `in` into out[blockIdx.x]: a tree in shared memory
// with __syncthreads down to one warp, then __shfl_down_sync inside the warp. Ordinary CUDA:
// cudasem compiles it with clang and its own CUDA header (no SDK needed).
#include <cuda_runtime.h>

#define BLOCK 64

__global__ void reduce_block(const float *in, float *out, int n) {
    __shared__ float partial[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s >= warpSize; s /= 2) {
        if (t < s)
            partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t < warpSize) {
        float v = partial[t];
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffff, v, offset);
        if (t == 0)
            out[blockIdx.x] = v;
    }
}
