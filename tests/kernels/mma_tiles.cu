// mma_tiles: one warp multiplies four pairs of tiles with mma.sync, one per shape and type
// family, loading each lane's fragments with the layouts of the PTX ISA's "Matrix Fragments for
// mma.m16n8k16 / m16n8k32 / m8n8k4" (9.7.14.5.x), written here from the ISA's formulas:
//   dh  = ah (16x16 f16) . bh (16x8 f16) + c (16x8 f32)   m16n8k16.f32.f16.f16.f32
//   db  = ab (16x16 bf16) . bb (16x8 bf16) + c             m16n8k16.f32.bf16.bf16.f32
//   di  = ai (16x32 s8) . bi' (32x8 s8) + ci (16x8 s32)    m16n8k32.s32.s8.s8.s32
//   dd  = ad (8x4 f64) . bd (4x8 f64) + cd (8x8 f64)       m8n8k4.f64.f64.f64.f64
// Matrices are row-major (B is K x N). ah and bi reach the fragments through shared memory,
// copied with cp.async (PTX ISA 9.7.9.25): ah in 16-byte copies (.ca), bi in 16-byte copies of
// which only the first 12 source bytes are read (.cg, src-size 12: bytes 12-15 of every 16 are
// zero in bi'). Lane 0 also copies c to cv8 with one .v8 load and store of 8 words.
// cudasem: ptx-features=+ptx70
// cudasem: gpu-arch=sm_80
#include "cudasem_cuda.h"

typedef unsigned short u16;
typedef unsigned char u8;

static __device__ __forceinline__ unsigned long long shared_address(const void *p) {
    unsigned long long s;
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(s) : "l"(p));
    return s;
}

static __device__ __forceinline__ unsigned pack16(u16 lo, u16 hi) {
    return (unsigned)lo | (unsigned)hi << 16;
}

extern "C" __global__ void mma_tiles(const u16 *ah, const u16 *bh, const float *c, float *dh,
                                     const u16 *ab, const u16 *bb, float *db, const unsigned *ai,
                                     const unsigned *bi, const int *ci, int *di, const double *ad,
                                     const double *bd, const double *cd, double *dd,
                                     float *cv8) {
    __shared__ __attribute__((aligned(16))) u16 sh_a[16 * 16];
    __shared__ __attribute__((aligned(16))) u8 sh_b[32 * 8];
    unsigned lane = threadIdx.x;
    unsigned g = lane >> 2, t = lane & 3;

    // cp.async: 32 copies of 16 bytes for ah, 16 copies of 16 (12 read) for bi.
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"l"(shared_address(sh_a + 8 * lane)),
                 "l"(ah + 8 * lane)
                 : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    if (lane < 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 12;" ::"l"(shared_address(sh_b + 16 * lane)),
                     "l"(bi + 4 * lane)
                     : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();

    // m16n8k16 fragments: a_i at row g + 8 * ((i >> 1) & 1), column 2t + (i & 1) + 8 * (i >> 2);
    // b_i at row 2t + (i & 1) + 8 * (i >> 1), column g; c_i at row g + 8 * (i >> 1), column 2t + (i & 1).
    unsigned a[4], b[2], x[4], y[2];
    float cf[4];
    for (int r = 0; r < 4; r++) {
        unsigned row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
        a[r] = pack16(sh_a[row * 16 + col], sh_a[row * 16 + col + 1]);
        x[r] = pack16(ab[row * 16 + col], ab[row * 16 + col + 1]);
    }
    for (int r = 0; r < 2; r++) {
        unsigned row = 2 * t + 8 * r;
        b[r] = pack16(bh[row * 8 + g], bh[(row + 1) * 8 + g]);
        y[r] = pack16(bb[row * 8 + g], bb[(row + 1) * 8 + g]);
    }
    for (int i = 0; i < 4; i++)
        cf[i] = c[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    float d[4], e[4];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(cf[0]),
                   "f"(cf[1]), "f"(cf[2]), "f"(cf[3]));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=f"(e[0]), "=f"(e[1]), "=f"(e[2]), "=f"(e[3])
                 : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]), "f"(cf[0]),
                   "f"(cf[1]), "f"(cf[2]), "f"(cf[3]));
    for (int i = 0; i < 4; i++) {
        dh[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
        db[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = e[i];
    }

    // m16n8k32 .s8: a_i at row g + 8 * ((i >> 2) & 1), column 4t + (i & 3) + 16 * (i >> 3);
    // b_i at row 4t + (i & 3) + 16 * (i >> 2), column g.
    unsigned p[4], q[2];
    int ic[4], id[4];
    // (ai holds the s8 matrix four elements to a word, lowest first.)
    for (int r = 0; r < 4; r++) {
        unsigned row = g + 8 * (r & 1), col = 4 * t + 16 * (r >> 1);
        p[r] = ai[(row * 32 + col) / 4];
    }
    for (int r = 0; r < 2; r++) {
        unsigned row = 4 * t + 16 * r;
        q[r] = (unsigned)sh_b[row * 8 + g] | (unsigned)sh_b[(row + 1) * 8 + g] << 8 |
               (unsigned)sh_b[(row + 2) * 8 + g] << 16 | (unsigned)sh_b[(row + 3) * 8 + g] << 24;
    }
    for (int i = 0; i < 4; i++)
        ic[i] = ci[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                 : "=r"(id[0]), "=r"(id[1]), "=r"(id[2]), "=r"(id[3])
                 : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "r"(q[0]), "r"(q[1]), "r"(ic[0]),
                   "r"(ic[1]), "r"(ic[2]), "r"(ic[3]));
    for (int i = 0; i < 4; i++)
        di[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = id[i];

    // m8n8k4 .f64: a at row g, column t; b at row t, column g; c_i at row g, column 2t + i.
    double dd0, dd1;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=d"(dd0), "=d"(dd1)
                 : "d"(ad[g * 4 + t]), "d"(bd[t * 8 + g]), "d"(cd[g * 8 + 2 * t]),
                   "d"(cd[g * 8 + 2 * t + 1]));
    dd[g * 8 + 2 * t] = dd0;
    dd[g * 8 + 2 * t + 1] = dd1;

    // .v8: 32 bytes in one access each way.
    if (lane == 0) {
        unsigned w[8];
        asm volatile("ld.global.v8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
                     : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]),
                       "=r"(w[6]), "=r"(w[7])
                     : "l"(c));
        asm volatile("st.global.v8.b32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8};" ::"l"(cv8), "r"(w[0]),
                     "r"(w[1]), "r"(w[2]), "r"(w[3]), "r"(w[4]), "r"(w[5]), "r"(w[6]), "r"(w[7])
                     : "memory");
    }
}
