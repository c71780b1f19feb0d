// bench_alu: ALU-bound benchmark (same computation as tests/opencl/bench_alu.cl): every thread
// iterates an integer hash 64 times (mad.lo, add, xor, shifts) on its own value. The loop is
// kept rolled with `#pragma unroll 1`. 65536 threads in the launch.
#include "cudasem_cuda.h"

extern "C" __global__ void bench_alu(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = in[i];
#pragma unroll 1
    for (int k = 0; k < 64; ++k) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 13;
        x += (unsigned)k * 0x9E3779B9u;
        x ^= x << 7;
    }
    out[i] = x;
}
