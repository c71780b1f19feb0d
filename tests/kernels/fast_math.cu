// fast_math: the shipped header's float and integer intrinsics beyond float_math. Thread i < n
// writes approx[6i..): the fast intrinsics __expf, __logf, __sinf, __cosf, __powf (ex2/lg2/
// sin/cos `.approx.f32`) and __fdividef; exact[10i..): floorf, ceilf, truncf, rintf (cvt.rmi/
// .rpi/.rzi/.rni), copysignf, __fadd_rn, __fmul_rn, __fdiv_rn, __fsqrt_rn, __saturatef;
// ints[8i..): __float_as_int, __float2int_rn/_rd/_ru, __sad, __byte_perm (prmt), __funnelshift_l,
// and __rhadd + __clzll + __ffsll.
#include "cudasem_cuda.h"

extern "C" __global__ void fast_math(const float *x, const float *y, float *approx, float *exact,
                                     int *ints, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    float *p = approx + 6 * i;
    p[0] = __expf(a);
    p[1] = __logf(b);
    p[2] = __sinf(a);
    p[3] = __cosf(a);
    p[4] = __powf(b, 1.5f);
    p[5] = __fdividef(a, b);
    float *e = exact + 10 * i;
    e[0] = floorf(a);
    e[1] = ceilf(a);
    e[2] = truncf(a);
    e[3] = rintf(a);
    e[4] = copysignf(b, a);
    e[5] = __fadd_rn(a, b);
    e[6] = __fmul_rn(a, b);
    e[7] = __fdiv_rn(a, b);
    e[8] = __fsqrt_rn(b);
    e[9] = __saturatef(a);
    int *k = ints + 8 * i;
    k[0] = __float_as_int(a);
    k[1] = __float2int_rn(a);
    k[2] = __float2int_rd(a);
    k[3] = __float2int_ru(a);
    k[4] = __sad(i, 2 * i - 40, 3u);
    k[5] = (int)__byte_perm((unsigned)i * 0x01020304u, 0xa0b0c0d0u, 0x5140u);
    k[6] = (int)__funnelshift_l((unsigned)i, 0x80000001u, (unsigned)i);
    k[7] = __rhadd(i, -2 * i) + __clzll(i) + __ffsll((long long)i << 20);
}
