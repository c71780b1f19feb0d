// half_axpy: half precision through the shipped header's `half` (cuda_fp16.h's names): a
// by-value `half` scalar, `__hfma` (fma.rn.f16, one rounding), the operators `*` and `+`
// (mul.f16 then add.f16, two roundings), `-`, `__hmax`, `__hneg`, `/` (the float quotient rounded
// to half), `<`, and `__half2float`. Thread i < n: y[i] = fma(a, x[i], y[i]) and three results in
// z[3i..3i+3), f[i] = x[i] as float (+1000 when x[i] < y[i]).
#include "cudasem_cuda.h"

extern "C" __global__ void half_axpy(int n, half a, const half *x, half *y, half *z, float *f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        half xi = x[i], yi = y[i];
        y[i] = __hfma(a, xi, yi);
        z[3 * i] = a * xi + yi;
        z[3 * i + 1] = __hmax(xi - yi, __hneg(a));
        z[3 * i + 2] = xi / (yi + half(1.0f));
        f[i] = __half2float(xi) + (xi < yi ? 1000.0f : 0.0f);
    }
}
