// stencil_1d: out[i] = sum of in[i-3 .. i+3] (out-of-range neighbours count 0), staged through
// shared memory with a halo of RADIUS elements on both sides loaded by the first RADIUS threads.
// Block size must be <= 128.
#include "cudasem_cuda.h"

#define RADIUS 3
#define MAXB 128

extern "C" __global__ void stencil_1d(const int *in, int *out, int n) {
    __shared__ int s[MAXB + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    s[l] = (g < n) ? in[g] : 0;
    if ((int)threadIdx.x < RADIUS) {
        int left = g - RADIUS;
        int right = g + (int)blockDim.x;
        s[l - RADIUS] = (left >= 0 && left < n) ? in[left] : 0;
        s[l + blockDim.x] = (right < n) ? in[right] : 0;
    }
    __syncthreads();
    if (g < n) {
        int acc = 0;
        for (int o = -RADIUS; o <= RADIUS; ++o)
            acc += s[l + o];
        out[g] = acc;
    }
}
