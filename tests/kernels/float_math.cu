// float_math: sqrt.rn.f32, min/max.f32, fma.rn.f32, div.rn.f32, abs, neg, cvt.rn.f32.s32 and
// cvt.rzi.s32.f32, a float comparison feeding selp, and f64: cvt.f64.f32, fma.rn.f64,
// sqrt.rn.f64, div.rn.f64. out has 8 floats per element, dout one double.
#include "cudasem_cuda.h"

extern "C" __global__ void float_math(const float *x, const float *y, float *out, int *iout, double *dout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    float *o = out + 8 * i;
    o[0] = __nvvm_sqrt_rn_f(__builtin_fabsf(a));
    o[1] = __builtin_fminf(a, b);
    o[2] = __builtin_fmaxf(a, b);
    o[3] = __builtin_fmaf(a, b, 1.5f);
    o[4] = a / (b == 0.0f ? 1.0f : b);
    o[5] = -a * 0.25f + (float)i;
    o[6] = a > b ? a - b : b - a;
    o[7] = __nvvm_div_rn_f(1.0f, 3.0f + __builtin_fabsf(b));
    iout[i] = (int)(a * 3.0f);
    double da = a, db = b;
    dout[i] = __nvvm_sqrt_rn_d(__builtin_fma(da, da, db * db)) / 3.0;
}
