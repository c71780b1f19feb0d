// scan_ok: T-S1-1 (seed 001 Fig. 1a): correct scan. Verdict: NO-RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void scan_ok(int *sum) {
    unsigned tid = threadIdx.x;
    unsigned TS = blockDim.x;
    unsigned offset = 1;
    int temp = 0;
    while (offset < TS) {
        if (tid >= offset)
            temp = sum[tid - offset];
        __syncthreads();
        if (tid >= offset)
            sum[tid] = sum[tid] + temp;
        __syncthreads();
        offset *= 2;
    }
}
