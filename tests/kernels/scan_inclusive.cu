// scan_inclusive: Hillis-Steele inclusive prefix sum per block in shared memory, double
// buffered (two arrays, ping-pong index), __syncthreads between steps. Each block scans its own
// segment of blockDim.x elements (block size <= 256); out-of-range elements are treated as 0.
// block_sums[blockIdx.x] receives the segment total.
#include "cudasem_cuda.h"

extern "C" __global__ void scan_inclusive(const int *in, int *out, int *block_sums, int n) {
    __shared__ int buf[2][256];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    int pout = 0, pin = 1;
    buf[pout][tid] = (i < (unsigned)n) ? in[i] : 0;
    __syncthreads();
    for (unsigned offset = 1; offset < blockDim.x; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset)
            buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
        else
            buf[pout][tid] = buf[pin][tid];
        __syncthreads();
    }
    if (i < (unsigned)n)
        out[i] = buf[pout][tid];
    if (tid == blockDim.x - 1)
        block_sums[blockIdx.x] = buf[pout][tid];
}
