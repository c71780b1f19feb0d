// master_index: D5 (the CUDA SDK Mandelbrot pattern, seed 002 §5): thread 0 of each block takes a
// base index with an atomic and publishes it through shared memory and a barrier.
// Verdict: NO-RACE (a GPUVerify false positive).
#include "cudasem_cuda.h"

extern "C" __global__ void master_index(int *ctr, int *out) {
    __shared__ int base;
    if (threadIdx.x == 0)
        base = atomicAdd(ctr, blockDim.x);
    asm volatile("bar.sync 0;" ::: "memory");
    out[base + threadIdx.x] = blockIdx.x;
}
