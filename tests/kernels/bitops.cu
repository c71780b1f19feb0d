// bitops: popc, clz, brev (__builtin_bitreverse32), bfe via shift-and-mask and via inline PTX
// asm, shifts (shl, shr.u32, shr.s32 on a negative value), and, or, xor, not.
// out has 8 words per element.
#include "cudasem_cuda.h"

static __device__ __forceinline__ unsigned bfe_asm(unsigned x, unsigned pos, unsigned len) {
    unsigned r;
    asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(pos), "r"(len));
    return r;
}

extern "C" __global__ void bitops(const unsigned *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = in[i];
    unsigned *o = out + 8 * i;
    o[0] = __popc(x);
    o[1] = __clz(x);
    o[2] = __brev(x);
    o[3] = (x >> 5) & 0x3ffu;            // bit field extract by hand
    o[4] = bfe_asm(x, 8, 12);            // bfe.u32 from inline asm
    o[5] = (x << (i & 31)) | (x >> ((32 - (i & 31)) & 31)); // rotate left
    o[6] = (unsigned)(((int)x) >> 7);    // arithmetic shift
    o[7] = ~(x ^ 0x5a5a5a5au) & (x | 0x0f0f0f0fu);
}
