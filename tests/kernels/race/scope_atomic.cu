// scope_atomic: a global histogram updated with atomicAdd_block (atom.cta): a .cta-scoped atomic
// does not order threads of different blocks. Verdict: RACE (inter-block, wrong atomic scope).
#include "cudasem_cuda.h"

extern "C" __global__ void scope_atomic(const int *data, int *hist) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd_block(&hist[data[i] % 8], 1);
}
