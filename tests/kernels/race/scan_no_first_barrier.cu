// scan_no_first_barrier: T-S1-1a: Fig. 1a without the first barrier. Verdict: RACE.
#include "race_min.h"

extern "C" __global__ void scan_no_first_barrier(int *sum) {
    unsigned tid = threadIdx_x;
    unsigned TS = blockDim_x;
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
