// bench_reduce: shared-memory tree reduction of 65536 ints (same computation as
// tests/opencl/bench_reduce.cl): 256 blocks of 256 threads, each block writes its partial sum to
// out[blockIdx.x]. Block size must be a power of two <= 256; any n works.
#include "cudasem_cuda.h"

extern "C" __global__ void bench_reduce(const int *in, int *out, int n) {
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
