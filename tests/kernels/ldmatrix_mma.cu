// ldmatrix_mma: the tensor-core pipeline nvcc emits for a tile of a half-precision GEMM: one warp
// copies A (16x16 f16, row-major) and B (16x8 f16, row-major K x N) to shared memory with
// cp.async, loads the mma fragments with ldmatrix (A: .x4, the four 8x8 quarters; B: .x2.trans,
// since mma wants B by columns) and multiplies with mma.sync m16n8k16 into D (16x8 f32):
//   d = a . b (no C). frag[32 * j + lane] is lane's register j of ldmatrix.x4 on A (for a direct
//   check of the layout of PTX ISA 9.7.14.5.15: rows g and columns 2t, 2t+1 of quarter j),
//   tfrag[32 * j + lane] its register j of ldmatrix.x2.trans on B.
// cudasem: ptx-features=+ptx70
// cudasem: gpu-arch=sm_80
#include "cudasem_cuda.h"

typedef unsigned short u16;

static __device__ __forceinline__ unsigned long long shared_address(const void *p) {
    unsigned long long s;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(s) : "l"(p));
    return s;
}

extern "C" __global__ void ldmatrix_mma(const u16 *a, const u16 *b, float *d, unsigned *frag,
                                        unsigned *tfrag) {
    __shared__ __attribute__((aligned(16))) u16 sa[16 * 16];
    __shared__ __attribute__((aligned(16))) u16 sb[16 * 8];
    unsigned lane = threadIdx.x;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"l"(shared_address(sa + 8 * lane)),
                 "l"(a + 8 * lane)
                 : "memory");
    if (lane < 16)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"l"(shared_address(sb + 8 * lane)),
                     "l"(b + 8 * lane)
                     : "memory");
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();

    // Lane l names row l % 8 of quarter l / 8: rows 0-7 / 8-15 (bit 0 of the quarter), columns
    // 0-7 / 8-15 (bit 1).
    unsigned row = (lane & 7) + 8 * ((lane >> 3) & 1), col = 8 * (lane >> 4);
    unsigned r[4], s[2];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "l"(shared_address(sa + row * 16 + col)));
    // B: lanes 0-15 name rows k = 0..15 (lanes 16-31 repeat them: their addresses are unused).
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(s[0]), "=r"(s[1])
                 : "l"(shared_address(sb + (lane & 15) * 8)));
    float c[4];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
                 : "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]), "r"(s[0]), "r"(s[1]), "f"(0.0f),
                   "f"(0.0f), "f"(0.0f), "f"(0.0f));
    unsigned g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++) {
        d[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = c[i];
        frag[32 * i + lane] = r[i];
    }
    tfrag[lane] = s[0];
    tfrag[32 + lane] = s[1];
}
