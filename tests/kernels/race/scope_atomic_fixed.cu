// scope_atomic_fixed: the same with atomicAdd (device scope). Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void scope_atomic_fixed(const int *data, int *hist) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&hist[data[i] % 8], 1);
}
