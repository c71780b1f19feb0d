// gen_hists_fixed: D3 with the barrier. Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void gen_hists_fixed(const int *data, int *out) {
    __shared__ int bins[64];
    unsigned tid = threadIdx.x;
    bins[tid] = 0;
    __syncthreads();
    atomicAdd(&bins[data[tid] % 64], 1);
    __syncthreads();
    out[tid] = bins[tid];
}
