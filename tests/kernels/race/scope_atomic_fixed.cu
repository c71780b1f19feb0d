// scope_atomic_fixed: the same with atomicAdd (device scope). Verdict: NO-RACE.
#include "race_min.h"

extern "C" __global__ void scope_atomic_fixed(const int *data, int *hist) {
    unsigned i = blockIdx_x * blockDim_x + threadIdx_x;
    atomicAdd(&hist[data[i] % 8], 1);
}
