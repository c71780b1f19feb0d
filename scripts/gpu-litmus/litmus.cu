// Litmus tests of the PTX memory model run on a real NVIDIA GPU, many times, with stress.
//
// What it answers: which of the weak outcomes that the PTX memory model allows (PTX ISA, "Memory
// Consistency Model") this GPU actually shows, for the scope tests that cudasem's cached memory
// reaches or not (see docs/hardware.md). Not used by the tests or CI (they have no GPU).
//
// Each launch runs INSTANCES independent copies of one test. A copy's two threads are lane 0 of
// the first warp of two different blocks (so different CTAs, usually on different SMs), paired
// at random anew each launch; each copy has its own x and y, 128 bytes apart (different lines).
// Incantations (Alglave et al., "GPU concurrency: weak behaviours and programming assumptions",
// ASPLOS 2015): the two threads of a copy start together (a spin on a per-copy counter), and a
// second warp of every block stresses memory meanwhile.
//
//   nvcc -O2 -arch=sm_90 -o litmus scripts/gpu-litmus/litmus.cu && ./litmus [LAUNCHES]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <random>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

constexpr int INSTANCES = 1024;
constexpr int STRIDE = 64;            // ints per copy: x at 0, y at 32 (128 bytes apart)
constexpr int SCRATCH = 1 << 20;      // ints of stress memory

enum Test { MP_CTA, MP_GPU, MP_WEAK, MP_CTA_STALE, MP_GPU_STALE, SB_BAR_DIFF_CTA, SB_FENCE_SC_CTA, SB_FENCE_SC_GPU, SB_WEAK, NTESTS };
struct Info { const char* name; const char* model; bool weak_is_sb; };
static const Info INFO[NTESTS] = {
    {"MP-cta (st.weak x; st.release.cta y || ld.acquire.cta y; ld.weak x)", "allowed", false},
    {"MP-gpu (release.gpu / acquire.gpu)", "forbidden", false},
    {"MP-weak (st.weak; st.weak || ld.weak; ld.weak)", "allowed", false},
    {"MP-cta, the reader's L1 primed (|| ld.weak x; ld.acquire.cta y; ld.weak x)", "allowed", false},
    {"MP-gpu, the reader's L1 primed (control)", "forbidden", false},
    {"SB+bar-diff-cta (st.weak; barrier.cta.sync 1; ld.weak)", "allowed", true},
    {"SB+fence.sc.cta, different CTAs", "allowed", true},
    {"SB+fence.sc.gpu", "forbidden", true},
    {"SB-weak (st.weak; ld.weak)", "allowed", true},
};

__device__ __forceinline__ void st_weak(int* p, int v) { asm volatile("st.weak.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ int ld_weak(int* p) { int v; asm volatile("ld.weak.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }

template <int T>
__device__ void side0(int* x, int* y, int* r) {
    if (T == MP_CTA) { st_weak(x, 1); asm volatile("st.release.cta.global.u32 [%0], 1;" :: "l"(y) : "memory"); }
    if (T == MP_GPU) { st_weak(x, 1); asm volatile("st.release.gpu.global.u32 [%0], 1;" :: "l"(y) : "memory"); }
    if (T == MP_WEAK || T == MP_CTA_STALE || T == MP_GPU_STALE) { st_weak(x, 1); if (T == MP_WEAK) st_weak(y, 1); }
    if (T == MP_CTA_STALE) asm volatile("st.release.cta.global.u32 [%0], 1;" :: "l"(y) : "memory");
    if (T == MP_GPU_STALE) asm volatile("st.release.gpu.global.u32 [%0], 1;" :: "l"(y) : "memory");
    if (T == SB_BAR_DIFF_CTA) { st_weak(x, 1); asm volatile("barrier.cta.sync 1, 32;" ::: "memory"); r[0] = ld_weak(y); }
    if (T == SB_FENCE_SC_CTA) { st_weak(x, 1); asm volatile("fence.sc.cta;" ::: "memory"); r[0] = ld_weak(y); }
    if (T == SB_FENCE_SC_GPU) { st_weak(x, 1); asm volatile("fence.sc.gpu;" ::: "memory"); r[0] = ld_weak(y); }
    if (T == SB_WEAK) { st_weak(x, 1); r[0] = ld_weak(y); }
}
template <int T>
__device__ void side1(int* x, int* y, int* r) {
    int a, b;
    if (T == MP_CTA) { asm volatile("ld.acquire.cta.global.u32 %0, [%1];" : "=r"(a) : "l"(y) : "memory"); b = ld_weak(x); r[0] = a; r[1] = b; }
    if (T == MP_GPU) { asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(a) : "l"(y) : "memory"); b = ld_weak(x); r[0] = a; r[1] = b; }
    if (T == MP_WEAK) { a = ld_weak(y); b = ld_weak(x); r[0] = a; r[1] = b; }
    if (T == MP_CTA_STALE || T == MP_GPU_STALE) {
        int primed = ld_weak(x);             // fills the reader's L1 line of x, most often with 0
        if (T == MP_CTA_STALE) asm volatile("ld.acquire.cta.global.u32 %0, [%1];" : "=r"(a) : "l"(y) : "memory");
        else asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(a) : "l"(y) : "memory");
        b = ld_weak(x);
        (void)primed;                        // the load itself is kept: asm volatile
        r[0] = a; r[1] = b;
    }
    if (T == SB_BAR_DIFF_CTA) { st_weak(y, 1); asm volatile("barrier.cta.sync 1, 32;" ::: "memory"); r[1] = ld_weak(x); }
    if (T == SB_FENCE_SC_CTA) { st_weak(y, 1); asm volatile("fence.sc.cta;" ::: "memory"); r[1] = ld_weak(x); }
    if (T == SB_FENCE_SC_GPU) { st_weak(y, 1); asm volatile("fence.sc.gpu;" ::: "memory"); r[1] = ld_weak(x); }
    if (T == SB_WEAK) { st_weak(y, 1); r[1] = ld_weak(x); }
}

template <int T>
__global__ void litmus(int* mem, int* res, int* start, const int* role, int* scratch, unsigned seed) {
    int me = role[blockIdx.x];               // copy * 2 + side
    int copy = me >> 1, side = me & 1;
    int* x = mem + copy * STRIDE;
    int* y = x + 32;
    if (threadIdx.x < 32) {                  // the test warp: lane 0 runs the test
        if (threadIdx.x == 0) {
            atomicAdd(&start[copy], 1);
            while (atomicAdd(&start[copy], 0) < 2) {}
        }
        __syncwarp();
        if (T == SB_BAR_DIFF_CTA) {           // the whole warp takes part in barrier.cta.sync 1, 32 (not .aligned: lane 0 reaches it elsewhere)
            if (threadIdx.x == 0) { if (side == 0) side0<T>(x, y, res + copy * 2); else side1<T>(x, y, res + copy * 2); }
            else asm volatile("barrier.cta.sync 1, 32;" ::: "memory");
        } else if (threadIdx.x == 0) {
            if (side == 0) side0<T>(x, y, res + copy * 2); else side1<T>(x, y, res + copy * 2);
        }
    } else {                                 // stress: scattered loads and stores
        unsigned s = seed ^ (blockIdx.x * 2654435761u) ^ threadIdx.x;
        for (int i = 0; i < 64; i++) {
            s = s * 1664525u + 1013904223u;
            int at = (s >> 8) % SCRATCH;
            scratch[at] = scratch[(at * 7 + 13) % SCRATCH] + 1;
        }
    }
}

typedef void (*Kernel)(int*, int*, int*, const int*, int*, unsigned);
static const Kernel KERNELS[NTESTS] = {litmus<0>, litmus<1>, litmus<2>, litmus<3>, litmus<4>, litmus<5>, litmus<6>, litmus<7>, litmus<8>};

int main(int argc, char** argv) {
    int launches = argc > 1 ? atoi(argv[1]) : 1000;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs; %d launches x %d copies per test\n", prop.name, prop.multiProcessorCount, launches, INSTANCES);
    int *mem, *res, *start, *role, *scratch;
    CHECK(cudaMalloc(&mem, INSTANCES * STRIDE * sizeof(int)));
    CHECK(cudaMalloc(&res, INSTANCES * 2 * sizeof(int)));
    CHECK(cudaMalloc(&start, INSTANCES * sizeof(int)));
    CHECK(cudaMalloc(&role, 2 * INSTANCES * sizeof(int)));
    CHECK(cudaMalloc(&scratch, SCRATCH * sizeof(int)));
    CHECK(cudaMemset(scratch, 0, SCRATCH * sizeof(int)));
    std::mt19937 rng(12345);
    std::vector<int> perm(2 * INSTANCES), out(2 * INSTANCES);
    printf("| test | PTX model | weak outcome seen | runs | outcomes (r0,r1): count |\n|---|---|---|---|---|\n");
    for (int t = 0; t < NTESTS; t++) {
        long long hist[2][2] = {{0, 0}, {0, 0}}, other = 0, weak = 0, runs = 0;
        for (int l = 0; l < launches; l++) {
            for (int i = 0; i < 2 * INSTANCES; i++) perm[i] = i;
            std::shuffle(perm.begin(), perm.end(), rng);
            CHECK(cudaMemcpy(role, perm.data(), perm.size() * sizeof(int), cudaMemcpyHostToDevice));
            CHECK(cudaMemset(mem, 0, INSTANCES * STRIDE * sizeof(int)));
            CHECK(cudaMemset(res, 0xff, INSTANCES * 2 * sizeof(int)));
            CHECK(cudaMemset(start, 0, INSTANCES * sizeof(int)));
            KERNELS[t]<<<2 * INSTANCES, 64>>>(mem, res, start, role, scratch, rng());
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpy(out.data(), res, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
            for (int c = 0; c < INSTANCES; c++) {
                int a = out[2 * c], b = out[2 * c + 1];
                runs++;
                if ((a == 0 || a == 1) && (b == 0 || b == 1)) hist[a][b]++; else other++;
                if (INFO[t].weak_is_sb ? (a == 0 && b == 0) : (a == 1 && b == 0)) weak++;
            }
        }
        printf("| %s | %s | %lld | %lld | (0,0): %lld, (0,1): %lld, (1,0): %lld, (1,1): %lld%s |\n", INFO[t].name,
               INFO[t].model, weak, runs, hist[0][0], hist[0][1], hist[1][0], hist[1][1], other ? ", other!" : "");
        fflush(stdout);
    }
    return 0;
}
