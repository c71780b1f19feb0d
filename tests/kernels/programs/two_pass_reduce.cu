// two_pass_reduce: a sum in two launches of one stream. pass1: each block sums its slice of `in`
// in shared memory (tree reduction) into partial[blockIdx]; pass2: one block adds the `n` partial
// sums into out[0]. pass2 reads what pass1 wrote only because the launches are ordered (one
// stream: a launch starts when the previous one has completed).
#include "cudasem_cuda.h"

extern "C" __global__ void pass1(const int *in, int *partial) {
    extern __shared__ int s[];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            s[t] += s[t + half];
        __syncthreads();
    }
    if (t == 0)
        partial[blockIdx.x] = s[0];
}

extern "C" __global__ void pass2(const int *partial, int *out, int n) {
    if (threadIdx.x == 0) {
        int sum = 0;
        for (int i = 0; i < n; i++)
            sum += partial[i];
        out[0] = sum;
    }
}
