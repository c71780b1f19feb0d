// globals_const: module-level variables: __device__ globals with initializers (a scalar, an
// array, a counter updated with atomics, and `result` written by thread 0), and __constant__ data
// (ld.const). Clang emits them
// as `.global .align 4 .u32 scale = 3;`, `.global .align 4 .b8 table[16] = {...};` and
// `.const .align 4 .b8 coeffs[16] = {...};` (byte arrays, little-endian).
#include "cudasem_cuda.h"

extern "C" {
__device__ int scale = 3;
__device__ int table[4] = {10, 20, 30, 40};
__device__ int calls = 0;
__device__ int result = -1;
__constant__ int coeffs[4] = {1, -1, 2, -2};
__constant__ float fcoef = 0.5f;
}

extern "C" __global__ void globals_const(const int *in, int *out, float *fout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i];
    out[i] = v * scale + table[i & 3] * coeffs[v & 3];
    fout[i] = (float)v * fcoef;
    atomicAdd(&calls, 1);
    if (i == 0)
        result = table[0] + table[3] + scale;
}
