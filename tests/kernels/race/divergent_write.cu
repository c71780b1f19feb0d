// divergent_write: T-S2-6, `if (tid < 16) A[o] = 1 else A[o] = 2`: a porting race. Verdict: RACE under
// both race models (lanes on the two paths do not synchronise until reconvergence).
#include "cudasem_cuda.h"

extern "C" __global__ void divergent_write(int *A, int o) {
    if (threadIdx.x < 16)
        A[o] = 1;
    else
        A[o] = 2;
}
