// saxpy: y[i] = a * x[i] + y[i] in single precision (fma contraction depends on clang's default
// -ffp-contract=fast for CUDA: the PTX holds an fma.rn.f32). Bounds-checked on n.
#include "cudasem_cuda.h"

extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
