// vecadd: c[i] = a[i] + b[i] with a 1D grid-stride-free launch and a bounds check on n.
// Exercises: %tid/%ntid/%ctaid, mad, mul.wide, cvta.to.global, ld/st.global, a guarded exit.
#include "cudasem_cuda.h"

extern "C" __global__ void vecadd(const int *a, const int *b, int *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
