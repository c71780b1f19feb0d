// divergent_if_else: the simplest divergent branch for reconvergence tests. Even lanes take the
// `then` side, odd lanes the `else` side. The two sides load from different arrays and compute
// differently shaped expressions, so clang can neither speculate the loads nor sink them into a
// select: the PTX keeps a real conditional branch, a `bra.uni` to the join and the join label.
#include "cudasem_cuda.h"

extern "C" __global__ void divergent_if_else(const int *a, const int *b, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v;
    if ((threadIdx.x & 1) == 0)
        v = a[i] * a[i];
    else
        v = b[i] - 1;
    out[i] = v;
}
