// master_index: D5 (the CUDA SDK Mandelbrot pattern, seed 002 §5): thread 0 of each block takes a
// base index with an atomic and publishes it through shared memory and a barrier.
// Verdict: NO-RACE (a GPUVerify false positive).
#include "race_min.h"

extern "C" __global__ void master_index(int *ctr, int *out) {
    __shared__ int base;
    if (threadIdx_x == 0)
        base = atomicAdd(ctr, blockDim_x);
    SYNCTHREADS();
    out[base + threadIdx_x] = blockIdx_x;
}
