// grid_barrier: a one-shot grid-wide barrier built from a global atomic counter and a spin loop
// (volatile load), between two phases: phase 1 writes partial[blockIdx] = sum of the block's
// in[] slice; after the barrier every block reads ALL partials and writes the grid total to
// out[blockIdx]. Only thread 0 of a block spins; the others wait at __syncthreads. Terminates
// whenever all blocks of the grid are resident (small grids, e.g. 2-4 blocks). `count` must start
// at 0.
#include "cudasem_cuda.h"

extern "C" __global__ void grid_barrier(const int *in, int *partial, int *count, int *out, int n) {
    __shared__ int s;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        s = 0;
    __syncthreads();
    if (i < n)
        atomicAdd(&s, in[i]);
    __syncthreads();
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s;
        __threadfence();
        atomicAdd(count, 1);
        volatile int *vc = count;
        while (*vc < (int)gridDim.x) {
        }
        __threadfence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        volatile int *vp = partial;
        int total = 0;
        for (unsigned b = 0; b < gridDim.x; ++b)
            total += vp[b];
        out[blockIdx.x] = total;
    }
}
