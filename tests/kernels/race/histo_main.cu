// histo_main: D4 (Parboil histo/histo_main, seed 002 §5): a plain read of a bucket that others
// update atomically. Verdict: RACE (read/atomic).
#include "cudasem_cuda.h"

extern "C" __global__ void histo_main(const int *A, int *out) {
    __shared__ int B[16];
    unsigned tid = threadIdx.x;
    if (tid < 16)
        B[tid] = 0;
    __syncthreads();
    int t = A[tid];
    int v = B[t];
    atomicAdd(&B[t], 1);
    __syncthreads();
    out[tid] = v;
}
