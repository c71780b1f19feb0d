// same_address: T-S2-5, the statement A[0] = tid. Verdict: RACE, even warp-aware (two lanes of
// one instruction write one address).
#include "cudasem_cuda.h"

extern "C" __global__ void same_address(int *A) {
    A[0] = threadIdx.x;
}
