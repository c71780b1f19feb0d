// saxpy: y[i] = a * x[i] + y[i] in single precision (fma contraction depends on clang's default
// -ffp-contract=fast for CUDA: the PTX holds an fma.rn.f32). Bounds-checked on n.
#include "cuda_min.h"

extern "C" __global__ void saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
    int i = blockIdx_x * blockDim_x + threadIdx_x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}
