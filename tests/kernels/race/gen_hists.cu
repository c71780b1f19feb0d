// gen_hists: D3 (Parboil tpacf/gen_hists, seed 002 §5): buckets zeroed, then updated atomically,
// with no barrier between. Verdict: RACE (atomic vs non-atomic).
#include "cudasem_cuda.h"

extern "C" __global__ void gen_hists(const int *data, int *out) {
    __shared__ int bins[64];
    unsigned tid = threadIdx.x;
    bins[tid] = 0;
    atomicAdd(&bins[data[tid] % 64], 1);
    __syncthreads();
    out[tid] = bins[tid];
}
