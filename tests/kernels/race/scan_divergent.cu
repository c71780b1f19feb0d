// scan_divergent: T-S1-2 (seed 001 Fig. 1b), the "optimised" scan: thread 0 never enters the loop
// and never reaches its barrier. Verdict: BARRIER-DIVERGENCE.
#include "cudasem_cuda.h"

extern "C" __global__ void scan_divergent(int *sum) {
    unsigned tid = threadIdx.x;
    unsigned offset = 1;
    while (offset <= tid) {
        int temp = sum[tid - offset];
        __syncthreads();
        sum[tid] = sum[tid] + temp;
        __syncthreads();
        offset *= 2;
    }
}
