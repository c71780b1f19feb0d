// histogram_shared: per-block histogram in shared memory with shared atomics
// (atom.shared.add.u32), then a merge into the global histogram with global atomics. Uses a
// block-stride loop for zeroing/merging so any nbins <= 64 and any block size work.
#include "cudasem_cuda.h"

extern "C" __global__ void histogram_shared(const unsigned *data, int *hist, int n, int nbins) {
    __shared__ int local[64];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&local[data[i] % (unsigned)nbins], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&hist[b], local[b]);
}
