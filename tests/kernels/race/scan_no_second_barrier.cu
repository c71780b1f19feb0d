// scan_no_second_barrier: T-S1-1b: Fig. 1a without the second barrier (the race spans two iterations). Verdict: RACE.
#include "cudasem_cuda.h"

extern "C" __global__ void scan_no_second_barrier(int *sum) {
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
        offset *= 2;
    }
}
