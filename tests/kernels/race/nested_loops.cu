// nested_loops: D1: thread 0 runs the inner loop 2 then 0 times, thread 1 once per outer
// iteration: the second synchronisation pairs equal pcs with different loop counters.
// Verdict: BARRIER-DIVERGENCE (loop iterations), which comparing pcs misses.
#include "cudasem_cuda.h"

extern "C" __global__ void nested_loops(int *out) {
    unsigned tid = threadIdx.x;
    int count = 0;
    for (int i = 0; i < 2; i++) {
        int n = (tid == 0) ? (i == 0 ? 2 : 0) : 1;
        for (int j = 0; j < n; j++) {
            __syncthreads();
            count++;
        }
    }
    out[tid] = count;
}
