// int24_half: 24-bit integer multiplies, sums of absolute differences and half-precision
// conversions through clang's builtins (clang 14 has no f16 arithmetic for nvptx: `__fp16` is a
// storage type, so the conversions are `cvt.rn.f16.f32` and `cvt.f32.f16`).
//
// For i < n, x = in[i], y = in[(i + 1) % n], f = fin[i], o = out[4i ..]:
//   o[0] = mul24.lo.s32(x, y), o[1] = mul24.lo.u32(x, y),
//   o[2] = sad.s32(x, y, i), o[3] = sad.u32(x, y, 7);
//   hout[i] = (__fp16)(f * 3.0f) (the .f16 bits), fout[i] = (float)hout[i] * 0.5f.
#include "cudasem_cuda.h"

extern "C" __global__ void int24_half(const int *in, const float *fin, int *out, __fp16 *hout,
                                      float *fout, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = in[i];
    int y = in[(i + 1) % n];
    float f = fin[i];
    out[4 * i + 0] = __nvvm_mul24_i(x, y);
    out[4 * i + 1] = (int)__nvvm_mul24_ui((unsigned)x, (unsigned)y);
    out[4 * i + 2] = __nvvm_sad_i(x, y, i);
    out[4 * i + 3] = (int)__nvvm_sad_ui((unsigned)x, (unsigned)y, 7u);
    __fp16 h = f * 3.0f;
    hout[i] = h;
    fout[i] = (float)h * 0.5f;
}
