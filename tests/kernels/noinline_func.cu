// noinline_func: a non-inlined __device__ function (a .func with .param arguments and return
// value, call.uni with the callseq block) called from a divergent branch and from uniform code.
#include "cudasem_cuda.h"

extern "C" __device__ __noinline__ int mix(int x, int y) {
    int r = x * 31 + y;
    return r ^ (r >> 3);
}

extern "C" __global__ void noinline_func(const int *a, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = a[i];
    if (v & 1)
        v = mix(v, i);
    out[i] = mix(v, 7);
}
