// scan_no_first_barrier: T-S1-1a: Fig. 1a without the first barrier. Verdict: RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void scan_no_first_barrier(int *sum) {
    unsigned tid = threadIdx.x;
    unsigned TS = blockDim.x;
    unsigned offset = 1;
    int temp = 0;
    while (offset < TS) {
        if (tid >= offset)
            temp = sum[tid - offset];
        if (tid >= offset)
            sum[tid] = sum[tid] + temp;
        __syncthreads();
        offset *= 2;
    }
}
