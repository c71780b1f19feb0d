// int64_arith: 64-bit integer arithmetic: mul.wide.s32/u32, mul.lo.s64, mul.hi.u64/s64, add/sub
// with carry across 32 bits, 64-bit shifts, signed/unsigned 64-bit division and remainder (clang
// emits a 32-bit fast path with a runtime check: a data-dependent branch) and 64<->32 conversions.
// out has 8 u64 words per element.
#include "cudasem_cuda.h"

extern "C" __global__ void int64_arith(const int *a, const int *b, unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = a[i], y = b[i];
    unsigned long long *o = out + 8 * i;
    long long w = (long long)x * (long long)y;                         // mul.wide.s32
    unsigned long long uw = (unsigned long long)(unsigned)x * (unsigned)y; // mul.wide.u32
    unsigned long long big = uw * 0x9E3779B97F4A7C15ull;               // mul.lo.s64
    o[0] = (unsigned long long)w;
    o[1] = uw;
    o[2] = __umul64hi(big, 0xC2B2AE3D27D4EB4Full);                     // mul.hi.u64
    o[3] = (unsigned long long)__mul64hi((long long)w, -7ll);          // mul.hi.s64
    o[4] = (big >> 17) ^ (big << 9);
    o[5] = (unsigned long long)(w + 0xFFFFFFFFll - (long long)uw);
    long long d = (long long)y == 0 ? 1 : (long long)y;
    o[6] = (unsigned long long)(w / d);                                // div.s64 (+ 32-bit fast path)
    o[7] = big % (uw | 1ull);                                          // rem.u64
}
