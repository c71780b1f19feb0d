// histogram_global: every thread adds 1 to hist[data[i] mod nbins] with a global atomic add
// (atom.global.add.u32), so many lanes of one warp hit the same address in the same step.
#include "cudasem_cuda.h"

extern "C" __global__ void histogram_global(const unsigned *data, int *hist, int n, int nbins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&hist[data[i] % (unsigned)nbins], 1);
}
