// vector_pack: PTX forms that clang emits for wider and narrower data: ld/st.global.v4.u32
// (int4-like vectors), ld.global.v2.f32, 8- and 16-bit loads (ld.global.u8/.u16 + cvt), a 64-bit
// value moved through a warp shuffle (split and rebuilt with mov.b64 {%r1, %r2}, %rd1), and
// byte swaps (prmt.b32). Needs full warps of 32.
// cudasem: ptx-features=+ptx64
#include "cudasem_cuda.h"

typedef int int4v __attribute__((ext_vector_type(4)));
typedef int int2v __attribute__((ext_vector_type(2)));
typedef float float2v __attribute__((ext_vector_type(2)));

extern "C" __global__ void vector_pack(const int4v *a, int4v *b, const float2v *f, float *fsum,
                                       const unsigned char *bytes, const short *halves,
                                       long long *wide, unsigned *swapped, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool ok = i < n;
    int4v v = ok ? a[i] : (int4v){0, 0, 0, 0};
    long long w = ok ? (long long)bytes[i] * 1000000007ll + halves[i] : 0;
    int2v parts = __builtin_bit_cast(int2v, w);
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int src = (lane + 1) & 31;
    parts.x = __shfl_sync(0xffffffffu, (int)parts.x, src);
    parts.y = __shfl_sync(0xffffffffu, (int)parts.y, src);
    long long up = __builtin_bit_cast(long long, parts);
    if (!ok)
        return;
    b[i] = v.wzyx + (int4v){1, 2, 3, 4};
    float2v fv = f[i];
    fsum[i] = fv.x + fv.y;
    wide[i] = up;
    swapped[i] = __byte_perm((unsigned)v.x, 0u, 0x0123u);
}
