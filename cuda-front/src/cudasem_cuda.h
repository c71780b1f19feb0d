// cudasem_cuda.h: the CUDA device names for compiling ordinary CUDA with clang's NVPTX backend
// WITHOUT the CUDA SDK (`clang --cuda-device-only -nocudainc -nocudalib`). cudasem passes it to
// clang with `-include`, so a `.cu` file needs no #include of its own; `#include <cuda_runtime.h>`
// and `#include <cooperative_groups.h>` still work (cudasem puts empty headers of those names on
// the include path).
//
// Everything is built from clang builtins (`__nvvm_*`), so the PTX depends on the compiler only.
// Functions are `nodebug` and always inlined: the line tables then give the caller's `.cu` line
// for the instructions they expand to (a race on `atomicAdd` is reported at the user's line, not
// at this header's).
//
// Names follow the CUDA C++ Programming Guide ("Built-in Variables", "Synchronization Functions",
// "Warp Shuffle Functions", "Warp Vote Functions", "Atomic Functions", "Memory Fence Functions",
// "Read-Only Data Cache Load Function", "Cooperative Groups").
#ifndef CUDASEM_CUDA_H
#define CUDASEM_CUDA_H

#ifndef __CUDACC__
#define __CUDACC__ 1
#endif

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __restrict__ __restrict
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

// Every helper below: a device function inlined at its call, without line info of its own.
#define __CUDASEM_FN static __device__ __inline__ __attribute__((always_inline, nodebug))
#define __CUDASEM_METHOD __device__ __inline__ __attribute__((always_inline, nodebug))
// Also usable in host code (`dim3 grid(4);` in main).
#define __CUDASEM_HD_FN static __host__ __device__ __inline__ __attribute__((always_inline, nodebug))
#define __CUDASEM_HD_METHOD __host__ __device__ __inline__ __attribute__((always_inline, nodebug))

// ---------------------------------------------------------------------------------------------
// Vector types (the few kernels use) and the built-in variables
// ---------------------------------------------------------------------------------------------

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
    __CUDASEM_HD_METHOD constexpr dim3(unsigned int vx = 1, unsigned int vy = 1,
                                       unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    __CUDASEM_HD_METHOD constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(8))) uint2 { unsigned int x, y; };
struct __attribute__((aligned(16))) uint4 { unsigned int x, y, z, w; };
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) double2 { double x, y; };
__CUDASEM_HD_FN int2 make_int2(int x, int y) { return {x, y}; }
__CUDASEM_HD_FN int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
__CUDASEM_HD_FN uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
__CUDASEM_HD_FN uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
__CUDASEM_HD_FN float2 make_float2(float x, float y) { return {x, y}; }
__CUDASEM_HD_FN float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
__CUDASEM_HD_FN double2 make_double2(double x, double y) { return {x, y}; }
// The other vector types of the Programming Guide's "Built-in Vector Types" table (their sizes
// and alignments as there).
struct __attribute__((aligned(2))) char2 { signed char x, y; };
struct __attribute__((aligned(2))) uchar2 { unsigned char x, y; };
struct char3 { signed char x, y, z; };
struct uchar3 { unsigned char x, y, z; };
struct __attribute__((aligned(4))) char4 { signed char x, y, z, w; };
struct __attribute__((aligned(4))) uchar4 { unsigned char x, y, z, w; };
struct __attribute__((aligned(4))) short2 { short x, y; };
struct __attribute__((aligned(4))) ushort2 { unsigned short x, y; };
struct __attribute__((aligned(8))) short4 { short x, y, z, w; };
struct __attribute__((aligned(8))) ushort4 { unsigned short x, y, z, w; };
struct int3 { int x, y, z; };
struct float3 { float x, y, z; };
struct double3 { double x, y, z; };
struct __attribute__((aligned(16))) double4 { double x, y, z, w; };
struct __attribute__((aligned(16))) longlong2 { long long x, y; };
struct __attribute__((aligned(16))) ulonglong2 { unsigned long long x, y; };
__CUDASEM_HD_FN char4 make_char4(signed char x, signed char y, signed char z, signed char w) {
    return {x, y, z, w};
}
__CUDASEM_HD_FN uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z,
                                   unsigned char w) {
    return {x, y, z, w};
}
__CUDASEM_HD_FN short2 make_short2(short x, short y) { return {x, y}; }
__CUDASEM_HD_FN int3 make_int3(int x, int y, int z) { return {x, y, z}; }
__CUDASEM_HD_FN uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }
__CUDASEM_HD_FN float3 make_float3(float x, float y, float z) { return {x, y, z}; }
__CUDASEM_HD_FN double3 make_double3(double x, double y, double z) { return {x, y, z}; }
__CUDASEM_HD_FN double4 make_double4(double x, double y, double z, double w) {
    return {x, y, z, w};
}
__CUDASEM_HD_FN longlong2 make_longlong2(long long x, long long y) { return {x, y}; }

// `threadIdx.x` reads %tid.x (a property getter, as clang's own CUDA headers do it).
#define __CUDASEM_SREG_FIELD(FIELD, INTRINSIC)                                                   \
    __declspec(property(get = __get_##FIELD)) unsigned int FIELD;                                \
    static __CUDASEM_METHOD unsigned int __get_##FIELD(void) { return INTRINSIC; }
#define __CUDASEM_SREG_VAR(TYPE, NAME, SREG)                                                     \
    struct TYPE {                                                                                \
        __CUDASEM_SREG_FIELD(x, __nvvm_read_ptx_sreg_##SREG##_x())                               \
        __CUDASEM_SREG_FIELD(y, __nvvm_read_ptx_sreg_##SREG##_y())                               \
        __CUDASEM_SREG_FIELD(z, __nvvm_read_ptx_sreg_##SREG##_z())                               \
        __CUDASEM_METHOD operator uint3() const { return {x, y, z}; }                            \
        __CUDASEM_METHOD operator dim3() const { return dim3(x, y, z); }                         \
                                                                                                 \
      private:                                                                                   \
        __device__ TYPE() = delete;                                                              \
        __device__ TYPE(const TYPE &) = delete;                                                  \
        __device__ void operator=(const TYPE &) const = delete;                                  \
        __device__ TYPE *operator&() const = delete;                                             \
    };                                                                                           \
    extern const __device__ __attribute__((weak)) TYPE NAME;
__CUDASEM_SREG_VAR(__cudasem_threadIdx_t, threadIdx, tid)
__CUDASEM_SREG_VAR(__cudasem_blockIdx_t, blockIdx, ctaid)
__CUDASEM_SREG_VAR(__cudasem_blockDim_t, blockDim, ntid)
__CUDASEM_SREG_VAR(__cudasem_gridDim_t, gridDim, nctaid)
#undef __CUDASEM_SREG_VAR
#undef __CUDASEM_SREG_FIELD

// As in CUDA: a compile-time 32 (cudasem's `--warp-size` changes the machine, not this).
static const __device__ int warpSize = 32;

// ---------------------------------------------------------------------------------------------
// Synchronization and fences: each is also a compiler memory barrier
// ---------------------------------------------------------------------------------------------

// The CUDA C++ Programming Guide ("Synchronization Functions", "Memory Fence Functions"): memory
// accesses made before `__syncthreads()` are visible to every thread of the block after it. clang's
// barrier builtins do not say so to the optimiser: its alias analysis decides that `bar.sync` cannot
// touch a `__shared__` variable whose address never escapes, and -O2 then moves a load of it above
// the barrier (or a store below it), so the kernel reads the value from before the barrier. An empty
// `asm volatile` with a "memory" clobber on each side fences the compiler (no access moves across it)
// and emits no instruction (only `// begin inline asm` comment lines); the builtin between them is
// still the barrier instruction, convergent, as before.
#define __CUDASEM_COMPILER_FENCE() asm volatile("" ::: "memory")
#define __CUDASEM_FENCED(STMT)                                                                     \
    do {                                                                                           \
        __CUDASEM_COMPILER_FENCE();                                                                \
        STMT;                                                                                      \
        __CUDASEM_COMPILER_FENCE();                                                                \
    } while (0)

// `bar.sync 0` (clang's `__syncthreads` builtin), then the macro that routes every later use of the
// name, this header's cooperative groups included, through the fenced form.
__CUDASEM_FN void __cudasem_syncthreads(void) { __CUDASEM_FENCED(__syncthreads()); }
#define __syncthreads() __cudasem_syncthreads()
__CUDASEM_FN int __syncthreads_count(int predicate) {
    int r;
    __CUDASEM_FENCED(r = __nvvm_bar0_popc(predicate));
    return r;
}
__CUDASEM_FN int __syncthreads_and(int predicate) {
    int r;
    __CUDASEM_FENCED(r = __nvvm_bar0_and(predicate));
    return r;
}
__CUDASEM_FN int __syncthreads_or(int predicate) {
    int r;
    __CUDASEM_FENCED(r = __nvvm_bar0_or(predicate));
    return r;
}
__CUDASEM_FN void __syncwarp(unsigned mask = 0xffffffffu) {
    __CUDASEM_FENCED(__nvvm_bar_warp_sync(mask));
}
__CUDASEM_FN void __threadfence_block(void) { __CUDASEM_FENCED(__nvvm_membar_cta()); }
__CUDASEM_FN void __threadfence(void) { __CUDASEM_FENCED(__nvvm_membar_gl()); }
__CUDASEM_FN void __threadfence_system(void) { __CUDASEM_FENCED(__nvvm_membar_sys()); }

// ---------------------------------------------------------------------------------------------
// Warp vote, shuffle, active mask
// ---------------------------------------------------------------------------------------------

__CUDASEM_FN unsigned __activemask(void) {
    unsigned mask;
    asm volatile("activemask.b32 %0;" : "=r"(mask));
    return mask;
}
__CUDASEM_FN unsigned __ballot_sync(unsigned mask, int predicate) {
    return __nvvm_vote_ballot_sync(mask, predicate);
}
__CUDASEM_FN int __any_sync(unsigned mask, int predicate) { return __nvvm_vote_any_sync(mask, predicate); }
__CUDASEM_FN int __all_sync(unsigned mask, int predicate) { return __nvvm_vote_all_sync(mask, predicate); }
__CUDASEM_FN int __uni_sync(unsigned mask, int predicate) { return __nvvm_vote_uni_sync(mask, predicate); }

// The shfl `c` operand (PTX ISA "shfl.sync"): segment mask in bits 8-12, clamp in bits 0-4.
#define __CUDASEM_SHFL_C(width) (((32 - (width)) << 8) | 0x1f)
#define __CUDASEM_SHFL_UP_C(width) ((32 - (width)) << 8)
#define __CUDASEM_SHFL_ALL(NAME, MODE, LANE_T, CFN)                                              \
    __CUDASEM_FN int NAME(unsigned mask, int var, LANE_T lane, int width = warpSize) {           \
        return __nvvm_shfl_sync_##MODE##_i32(mask, var, lane, CFN(width));                       \
    }                                                                                            \
    __CUDASEM_FN unsigned NAME(unsigned mask, unsigned var, LANE_T lane, int width = warpSize) { \
        return (unsigned)__nvvm_shfl_sync_##MODE##_i32(mask, (int)var, lane, CFN(width));        \
    }                                                                                            \
    __CUDASEM_FN float NAME(unsigned mask, float var, LANE_T lane, int width = warpSize) {       \
        return __nvvm_shfl_sync_##MODE##_f32(mask, var, lane, CFN(width));                       \
    }                                                                                            \
    __CUDASEM_FN long long NAME(unsigned mask, long long var, LANE_T lane, int width = warpSize) { \
        int lo = __nvvm_shfl_sync_##MODE##_i32(mask, (int)var, lane, CFN(width));               \
        int hi = __nvvm_shfl_sync_##MODE##_i32(mask, (int)(var >> 32), lane, CFN(width));       \
        return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);            \
    }                                                                                            \
    __CUDASEM_FN unsigned long long NAME(unsigned mask, unsigned long long var, LANE_T lane,    \
                                         int width = warpSize) {                                 \
        return (unsigned long long)NAME(mask, (long long)var, lane, width);                     \
    }                                                                                            \
    __CUDASEM_FN double NAME(unsigned mask, double var, LANE_T lane, int width = warpSize) {     \
        return __builtin_bit_cast(double,                                                        \
                                  NAME(mask, __builtin_bit_cast(long long, var), lane, width));  \
    }
__CUDASEM_SHFL_ALL(__shfl_sync, idx, int, __CUDASEM_SHFL_C)
__CUDASEM_SHFL_ALL(__shfl_up_sync, up, unsigned, __CUDASEM_SHFL_UP_C)
__CUDASEM_SHFL_ALL(__shfl_down_sync, down, unsigned, __CUDASEM_SHFL_C)
__CUDASEM_SHFL_ALL(__shfl_xor_sync, bfly, int, __CUDASEM_SHFL_C)
#undef __CUDASEM_SHFL_ALL

// ---------------------------------------------------------------------------------------------
// Atomics (generic addresses: `atom.add.u32` etc.; `_block`/`_system` are the .cta/.sys scopes)
// ---------------------------------------------------------------------------------------------

#define __CUDASEM_ATOMIC_INT(NAME, OP, SCOPE)                                                    \
    __CUDASEM_FN int NAME(int *p, int v) { return __nvvm_atom##SCOPE##_##OP##_gen_i(p, v); }     \
    __CUDASEM_FN unsigned NAME(unsigned *p, unsigned v) {                                        \
        return (unsigned)__nvvm_atom##SCOPE##_##OP##_gen_i((int *)p, (int)v);                    \
    }                                                                                            \
    __CUDASEM_FN unsigned long long NAME(unsigned long long *p, unsigned long long v) {          \
        return (unsigned long long)__nvvm_atom##SCOPE##_##OP##_gen_ll((long long *)p,            \
                                                                      (long long)v);             \
    }
#define __CUDASEM_ATOMIC_MINMAX(NAME, OP, SCOPE)                                                 \
    __CUDASEM_FN int NAME(int *p, int v) { return __nvvm_atom##SCOPE##_##OP##_gen_i(p, v); }     \
    __CUDASEM_FN unsigned NAME(unsigned *p, unsigned v) {                                        \
        return __nvvm_atom##SCOPE##_##OP##_gen_ui(p, v);                                         \
    }                                                                                            \
    __CUDASEM_FN long long NAME(long long *p, long long v) {                                     \
        return __nvvm_atom##SCOPE##_##OP##_gen_ll(p, v);                                         \
    }                                                                                            \
    __CUDASEM_FN unsigned long long NAME(unsigned long long *p, unsigned long long v) {          \
        return __nvvm_atom##SCOPE##_##OP##_gen_ull(p, v);                                        \
    }
#define __CUDASEM_ATOMIC_FLOAT(NAME, SCOPE)                                                      \
    __CUDASEM_FN float NAME(float *p, float v) { return __nvvm_atom##SCOPE##_add_gen_f(p, v); }  \
    __CUDASEM_FN double NAME(double *p, double v) { return __nvvm_atom##SCOPE##_add_gen_d(p, v); }
#define __CUDASEM_ATOMIC_CAS(NAME, SCOPE)                                                        \
    __CUDASEM_FN int NAME(int *p, int compare, int v) {                                          \
        return __nvvm_atom##SCOPE##_cas_gen_i(p, compare, v);                                    \
    }                                                                                            \
    __CUDASEM_FN unsigned NAME(unsigned *p, unsigned compare, unsigned v) {                      \
        return (unsigned)__nvvm_atom##SCOPE##_cas_gen_i((int *)p, (int)compare, (int)v);         \
    }                                                                                            \
    __CUDASEM_FN unsigned long long NAME(unsigned long long *p, unsigned long long compare,     \
                                         unsigned long long v) {                                 \
        return (unsigned long long)__nvvm_atom##SCOPE##_cas_gen_ll(                              \
            (long long *)p, (long long)compare, (long long)v);                                   \
    }
#define __CUDASEM_ATOMIC_SCOPE(SUFFIX, SCOPE)                                                    \
    __CUDASEM_ATOMIC_INT(atomicAdd##SUFFIX, add, SCOPE)                                          \
    __CUDASEM_ATOMIC_FLOAT(atomicAdd##SUFFIX, SCOPE)                                             \
    __CUDASEM_ATOMIC_INT(atomicExch##SUFFIX, xchg, SCOPE)                                        \
    __CUDASEM_ATOMIC_INT(atomicAnd##SUFFIX, and, SCOPE)                                          \
    __CUDASEM_ATOMIC_INT(atomicOr##SUFFIX, or, SCOPE)                                            \
    __CUDASEM_ATOMIC_INT(atomicXor##SUFFIX, xor, SCOPE)                                          \
    __CUDASEM_ATOMIC_MINMAX(atomicMin##SUFFIX, min, SCOPE)                                       \
    __CUDASEM_ATOMIC_MINMAX(atomicMax##SUFFIX, max, SCOPE)                                       \
    __CUDASEM_ATOMIC_CAS(atomicCAS##SUFFIX, SCOPE)                                               \
    __CUDASEM_FN unsigned atomicInc##SUFFIX(unsigned *p, unsigned v) {                           \
        return __nvvm_atom##SCOPE##_inc_gen_ui(p, v);                                            \
    }                                                                                            \
    __CUDASEM_FN unsigned atomicDec##SUFFIX(unsigned *p, unsigned v) {                           \
        return __nvvm_atom##SCOPE##_dec_gen_ui(p, v);                                            \
    }                                                                                            \
    __CUDASEM_FN int atomicSub##SUFFIX(int *p, int v) { return atomicAdd##SUFFIX(p, -v); }       \
    __CUDASEM_FN unsigned atomicSub##SUFFIX(unsigned *p, unsigned v) {                           \
        return atomicAdd##SUFFIX(p, 0u - v);                                                     \
    }                                                                                            \
    __CUDASEM_FN float atomicExch##SUFFIX(float *p, float v) {                                   \
        return __builtin_bit_cast(float, atomicExch##SUFFIX((int *)p, __builtin_bit_cast(int, v))); \
    }
__CUDASEM_ATOMIC_SCOPE(, )
__CUDASEM_ATOMIC_SCOPE(_block, _cta)
__CUDASEM_ATOMIC_SCOPE(_system, _sys)
#undef __CUDASEM_ATOMIC_SCOPE
#undef __CUDASEM_ATOMIC_CAS
#undef __CUDASEM_ATOMIC_FLOAT
#undef __CUDASEM_ATOMIC_MINMAX
#undef __CUDASEM_ATOMIC_INT

// ---------------------------------------------------------------------------------------------
// Read-only loads (`ld.global.nc`) and integer/float intrinsics
// ---------------------------------------------------------------------------------------------

__CUDASEM_FN char __ldg(const char *p) { return __nvvm_ldg_c(p); }
__CUDASEM_FN short __ldg(const short *p) { return __nvvm_ldg_s(p); }
__CUDASEM_FN int __ldg(const int *p) { return __nvvm_ldg_i(p); }
__CUDASEM_FN long long __ldg(const long long *p) { return __nvvm_ldg_ll(p); }
__CUDASEM_FN unsigned char __ldg(const unsigned char *p) { return __nvvm_ldg_uc(p); }
__CUDASEM_FN unsigned short __ldg(const unsigned short *p) { return __nvvm_ldg_us(p); }
__CUDASEM_FN unsigned __ldg(const unsigned *p) { return __nvvm_ldg_ui(p); }
__CUDASEM_FN unsigned long long __ldg(const unsigned long long *p) { return __nvvm_ldg_ull(p); }
__CUDASEM_FN float __ldg(const float *p) { return __nvvm_ldg_f(p); }
__CUDASEM_FN double __ldg(const double *p) { return __nvvm_ldg_d(p); }

__CUDASEM_FN int __popc(unsigned x) { return __builtin_popcount(x); }
__CUDASEM_FN int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
__CUDASEM_FN int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
__CUDASEM_FN int __ffs(int x) { return __builtin_ffs(x); }
__CUDASEM_FN unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
__CUDASEM_FN int __mulhi(int a, int b) { return __nvvm_mulhi_i(a, b); }
__CUDASEM_FN unsigned __umulhi(unsigned a, unsigned b) { return __nvvm_mulhi_ui(a, b); }
__CUDASEM_FN long long __mul64hi(long long a, long long b) { return __nvvm_mulhi_ll(a, b); }
__CUDASEM_FN unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return __nvvm_mulhi_ull(a, b);
}
// Bytes of {y, x} picked by the nibbles of s (prmt.b32, PTX ISA "prmt").
__CUDASEM_FN unsigned __byte_perm(unsigned x, unsigned y, unsigned s) { return __nvvm_prmt(x, y, s); }
__CUDASEM_FN int __mul24(int a, int b) { return __nvvm_mul24_i(a, b); }
__CUDASEM_FN unsigned __umul24(unsigned a, unsigned b) { return __nvvm_mul24_ui(a, b); }
__CUDASEM_FN int min(int a, int b) { return a < b ? a : b; }
__CUDASEM_FN int max(int a, int b) { return a > b ? a : b; }
__CUDASEM_FN unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
__CUDASEM_FN unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
__CUDASEM_FN float fminf(float a, float b) { return __nvvm_fmin_f(a, b); }
__CUDASEM_FN float fmaxf(float a, float b) { return __nvvm_fmax_f(a, b); }
__CUDASEM_FN float fabsf(float a) { return __builtin_fabsf(a); }
__CUDASEM_FN double fabs(double a) { return __builtin_fabs(a); }
__CUDASEM_FN float sqrtf(float a) { return __nvvm_sqrt_rn_f(a); }
__CUDASEM_FN double sqrt(double a) { return __nvvm_sqrt_rn_d(a); }
__CUDASEM_FN float fmaf(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__CUDASEM_FN double fma(double a, double b, double c) { return __nvvm_fma_rn_d(a, b, c); }
__CUDASEM_FN float __fdividef(float a, float b) { return __nvvm_div_approx_f(a, b); }
__CUDASEM_FN float rsqrtf(float a) { return __nvvm_rsqrt_approx_f(a); }
__CUDASEM_FN double rsqrt(double a) { return __nvvm_rsqrt_approx_d(a); }
__CUDASEM_FN long long min(long long a, long long b) { return a < b ? a : b; }
__CUDASEM_FN long long max(long long a, long long b) { return a > b ? a : b; }
__CUDASEM_FN unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__CUDASEM_FN unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
__CUDASEM_FN float min(float a, float b) { return fminf(a, b); }
__CUDASEM_FN float max(float a, float b) { return fmaxf(a, b); }
__CUDASEM_FN double fmin(double a, double b) { return __nvvm_fmin_d(a, b); }
__CUDASEM_FN double fmax(double a, double b) { return __nvvm_fmax_d(a, b); }
__CUDASEM_FN double min(double a, double b) { return fmin(a, b); }
__CUDASEM_FN double max(double a, double b) { return fmax(a, b); }
__CUDASEM_FN int abs(int a) { return a < 0 ? -a : a; }
__CUDASEM_FN long long llabs(long long a) { return a < 0 ? -a : a; }

// Rounding to an integral value is exact (cvt.rmi/.rpi/.rzi/.rni), unlike the functions of
// libdevice below.
__CUDASEM_FN float floorf(float a) { return __builtin_floorf(a); }
__CUDASEM_FN float ceilf(float a) { return __builtin_ceilf(a); }
__CUDASEM_FN float truncf(float a) { return __builtin_truncf(a); }
__CUDASEM_FN float rintf(float a) { return __builtin_rintf(a); }
__CUDASEM_FN float nearbyintf(float a) { return __builtin_nearbyintf(a); }
__CUDASEM_FN double floor(double a) { return __builtin_floor(a); }
__CUDASEM_FN double ceil(double a) { return __builtin_ceil(a); }
__CUDASEM_FN double trunc(double a) { return __builtin_trunc(a); }
__CUDASEM_FN double rint(double a) { return __builtin_rint(a); }
__CUDASEM_FN double nearbyint(double a) { return __builtin_nearbyint(a); }
__CUDASEM_FN float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
__CUDASEM_FN double copysign(double a, double b) { return __builtin_copysign(a, b); }

// Reinterpretation ("Type Casting Intrinsics") and conversions with a named rounding.
__CUDASEM_FN float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
__CUDASEM_FN int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
__CUDASEM_FN float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
__CUDASEM_FN unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
__CUDASEM_FN double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
__CUDASEM_FN long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
__CUDASEM_FN int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
__CUDASEM_FN int __double2loint(double x) { return (int)__double_as_longlong(x); }
__CUDASEM_FN double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}
__CUDASEM_FN int __float2int_rn(float x) { return __nvvm_f2i_rn(x); }
__CUDASEM_FN int __float2int_rz(float x) { return __nvvm_f2i_rz(x); }
__CUDASEM_FN int __float2int_rd(float x) { return __nvvm_f2i_rm(x); }
__CUDASEM_FN int __float2int_ru(float x) { return __nvvm_f2i_rp(x); }
__CUDASEM_FN unsigned __float2uint_rn(float x) { return __nvvm_f2ui_rn(x); }
__CUDASEM_FN unsigned __float2uint_rz(float x) { return __nvvm_f2ui_rz(x); }
__CUDASEM_FN float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }
__CUDASEM_FN float __uint2float_rn(unsigned x) { return __nvvm_ui2f_rn(x); }
__CUDASEM_FN int __double2int_rn(double x) { return __nvvm_d2i_rn(x); }
__CUDASEM_FN int __double2int_rz(double x) { return __nvvm_d2i_rz(x); }
__CUDASEM_FN float __double2float_rn(double x) { return __nvvm_d2f_rn(x); }

// Arithmetic with a named rounding, never contracted into an fma ("Single/Double Precision
// Intrinsics").
__CUDASEM_FN float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
__CUDASEM_FN float __fsub_rn(float a, float b) { return __nvvm_add_rn_f(a, -b); }
__CUDASEM_FN float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
__CUDASEM_FN float __fdiv_rn(float a, float b) { return __nvvm_div_rn_f(a, b); }
__CUDASEM_FN float __frcp_rn(float a) { return __nvvm_rcp_rn_f(a); }
__CUDASEM_FN float __fsqrt_rn(float a) { return __nvvm_sqrt_rn_f(a); }
__CUDASEM_FN float __fmaf_rn(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__CUDASEM_FN double __dadd_rn(double a, double b) { return __nvvm_add_rn_d(a, b); }
__CUDASEM_FN double __dsub_rn(double a, double b) { return __nvvm_add_rn_d(a, -b); }
__CUDASEM_FN double __dmul_rn(double a, double b) { return __nvvm_mul_rn_d(a, b); }
__CUDASEM_FN double __ddiv_rn(double a, double b) { return __nvvm_div_rn_d(a, b); }
__CUDASEM_FN double __drcp_rn(double a) { return __nvvm_rcp_rn_d(a); }
__CUDASEM_FN double __dsqrt_rn(double a) { return __nvvm_sqrt_rn_d(a); }
__CUDASEM_FN double __fma_rn(double a, double b, double c) { return __nvvm_fma_rn_d(a, b, c); }
__CUDASEM_FN float __saturatef(float a) { return __nvvm_saturate_f(a); }

// The fast intrinsics, as libdevice's __nv_fast_* build them from the approximate PTX
// instructions (PTX ISA "ex2", "lg2", "sin", "cos": `.approx.f32`).
#define __CUDASEM_LOG2E 1.4426950408889634f
#define __CUDASEM_LN2 0.6931471805599453f
__CUDASEM_FN float __expf(float a) { return __nvvm_ex2_approx_f(a * __CUDASEM_LOG2E); }
__CUDASEM_FN float __exp10f(float a) { return __nvvm_ex2_approx_f(a * 3.321928094887362f); }
__CUDASEM_FN float __log2f(float a) { return __nvvm_lg2_approx_f(a); }
__CUDASEM_FN float __logf(float a) { return __nvvm_lg2_approx_f(a) * __CUDASEM_LN2; }
__CUDASEM_FN float __log10f(float a) { return __nvvm_lg2_approx_f(a) * 0.3010299956639812f; }
__CUDASEM_FN float __powf(float a, float b) {
    return __nvvm_ex2_approx_f(b * __nvvm_lg2_approx_f(a));
}
__CUDASEM_FN float __sinf(float a) { return __nvvm_sin_approx_f(a); }
__CUDASEM_FN float __cosf(float a) { return __nvvm_cos_approx_f(a); }
__CUDASEM_FN float __tanf(float a) { return __fdividef(__sinf(a), __cosf(a)); }
__CUDASEM_FN void __sincosf(float a, float *s, float *c) {
    *s = __sinf(a);
    *c = __cosf(a);
}
#undef __CUDASEM_LOG2E
#undef __CUDASEM_LN2

// The CUDA math library's other functions (expf, sinf, powf, exp, ...) are libdevice code,
// which cudasem does not link (it compiles without the CUDA SDK): a call is a compile error
// that names the way out, rather than clang's "no matching function".
#define __CUDASEM_NEEDS_LIBDEVICE(RET, NAME, PARAMS, INSTEAD)                                     \
    __CUDASEM_FN RET NAME PARAMS __attribute__((unavailable(                                     \
        #NAME " is implemented by the CUDA SDK's libdevice, which cudasem does not link: use "    \
        INSTEAD ", or compile the kernel to PTX with nvcc and give cudasem the .ptx")));
#define __CUDASEM_FAST(NAME) "the fast intrinsic " #NAME " (PTX .approx instructions)"
__CUDASEM_NEEDS_LIBDEVICE(float, expf, (float), __CUDASEM_FAST(__expf))
__CUDASEM_NEEDS_LIBDEVICE(float, exp2f, (float), __CUDASEM_FAST(__expf))
__CUDASEM_NEEDS_LIBDEVICE(float, exp10f, (float), __CUDASEM_FAST(__exp10f))
__CUDASEM_NEEDS_LIBDEVICE(float, expm1f, (float), __CUDASEM_FAST(__expf))
__CUDASEM_NEEDS_LIBDEVICE(float, logf, (float), __CUDASEM_FAST(__logf))
__CUDASEM_NEEDS_LIBDEVICE(float, log2f, (float), __CUDASEM_FAST(__log2f))
__CUDASEM_NEEDS_LIBDEVICE(float, log10f, (float), __CUDASEM_FAST(__log10f))
__CUDASEM_NEEDS_LIBDEVICE(float, log1pf, (float), __CUDASEM_FAST(__logf))
__CUDASEM_NEEDS_LIBDEVICE(float, powf, (float, float), __CUDASEM_FAST(__powf))
__CUDASEM_NEEDS_LIBDEVICE(float, sinf, (float), __CUDASEM_FAST(__sinf))
__CUDASEM_NEEDS_LIBDEVICE(float, cosf, (float), __CUDASEM_FAST(__cosf))
__CUDASEM_NEEDS_LIBDEVICE(float, tanf, (float), __CUDASEM_FAST(__tanf))
__CUDASEM_NEEDS_LIBDEVICE(void, sincosf, (float, float *, float *), __CUDASEM_FAST(__sincosf))
__CUDASEM_NEEDS_LIBDEVICE(float, tanhf, (float), "an expression of __expf")
__CUDASEM_NEEDS_LIBDEVICE(float, roundf, (float), "rintf (round half to even) or floorf(x + 0.5f)")
__CUDASEM_NEEDS_LIBDEVICE(float, fmodf, (float, float), "x - truncf(x / y) * y")
__CUDASEM_NEEDS_LIBDEVICE(double, exp, (double), "a float and __expf")
__CUDASEM_NEEDS_LIBDEVICE(double, log, (double), "a float and __logf")
__CUDASEM_NEEDS_LIBDEVICE(double, pow, (double, double), "a float and __powf")
__CUDASEM_NEEDS_LIBDEVICE(double, sin, (double), "a float and __sinf")
__CUDASEM_NEEDS_LIBDEVICE(double, cos, (double), "a float and __cosf")
__CUDASEM_NEEDS_LIBDEVICE(double, tanh, (double), "a float and __expf")
__CUDASEM_NEEDS_LIBDEVICE(double, round, (double), "rint (round half to even) or floor(x + 0.5)")
#undef __CUDASEM_FAST
#undef __CUDASEM_NEEDS_LIBDEVICE

// Integer intrinsics beyond the bit counts above.
__CUDASEM_FN int __sad(int a, int b, unsigned c) { return __nvvm_sad_i(a, b, (int)c); }
__CUDASEM_FN unsigned __usad(unsigned a, unsigned b, unsigned c) { return __nvvm_sad_ui(a, b, c); }
__CUDASEM_FN unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
__CUDASEM_FN int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
__CUDASEM_FN int __ffsll(long long x) { return __builtin_ffsll(x); }
__CUDASEM_FN int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
__CUDASEM_FN int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
__CUDASEM_FN unsigned __uhadd(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a + b) >> 1);
}
__CUDASEM_FN unsigned __urhadd(unsigned a, unsigned b) {
    return (unsigned)(((unsigned long long)a + b + 1) >> 1);
}
__CUDASEM_FN unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) << (shift & 31) >> 32);
}
__CUDASEM_FN unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}

// Time, sleeping, traps ("Time Function", "Nanosleep Function", "Trap Function").
__CUDASEM_FN long long clock64(void) { return (long long)__nvvm_read_ptx_sreg_clock64(); }
__CUDASEM_FN int clock(void) { return __nvvm_read_ptx_sreg_clock(); }
__CUDASEM_FN void __nanosleep(unsigned ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns)); }
__CUDASEM_FN void __trap(void) { __builtin_trap(); }
// `assert(c)` in device code (glibc's macro calls __assert_fail): a failed assertion traps, as
// on a GPU (where it also prints the message and the kernel fails).
__CUDASEM_FN __attribute__((noreturn)) void __assert_fail(const char *, const char *, unsigned,
                                                          const char *) {
    __builtin_trap();
}

// Device `printf` ("Formatted Output"): clang turns a call into one of `vprintf`, declared
// `.extern .func` in the PTX.
extern "C" __device__ int printf(const char *, ...);
// Device `malloc`/`free` ("Dynamic Global Memory Allocation"), declared as clang's own CUDA
// headers declare them: the C++ headers' device `operator new` (clang's cuda_wrappers/new, which
// <algorithm> and <memory> include) calls them. A call is a call to a function without a body.
extern "C" __device__ void *malloc(__SIZE_TYPE__) __attribute__((nothrow, malloc));
extern "C" __device__ void free(void *) __attribute__((nothrow));

// ---------------------------------------------------------------------------------------------
// Half precision (cuda_fp16.h): `__half`/`half` as 16 bits, arithmetic in PTX's `.f16`
// instructions (PTX ISA "Half Precision Floating-Point Instructions"), conversions with cvt.
// ---------------------------------------------------------------------------------------------

struct __half;
__CUDASEM_FN __half __float2half(float f);
__CUDASEM_FN float __half2float(__half h);
struct __attribute__((aligned(2))) __half {
    unsigned short __x;
    __half() = default;
    __CUDASEM_METHOD __half(float f) : __x(__float2half(f).__x) {}
    __CUDASEM_METHOD __half(double f) : __half((float)f) {}
    __CUDASEM_METHOD __half(int i) : __half((float)i) {}
    __CUDASEM_METHOD operator float() const { return __half2float(*this); }
};
typedef __half half;
__CUDASEM_FN __half __cudasem_half_bits(unsigned short x) {
    __half h;
    h.__x = x;
    return h;
}
__CUDASEM_FN __half __float2half(float f) {
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
    return __cudasem_half_bits(r);
}
__CUDASEM_FN __half __float2half_rn(float f) { return __float2half(f); }
__CUDASEM_FN float __half2float(__half h) {
    float r;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(h.__x));
    return r;
}
__CUDASEM_FN __half __int2half_rn(int i) { return __float2half((float)i); }
__CUDASEM_FN __half __ushort_as_half(unsigned short x) { return __cudasem_half_bits(x); }
__CUDASEM_FN unsigned short __half_as_ushort(__half h) { return h.__x; }
#define __CUDASEM_HALF_BINARY(NAME, INSTR)                                                       \
    __CUDASEM_FN __half NAME(__half a, __half b) {                                               \
        unsigned short r;                                                                        \
        asm(INSTR " %0, %1, %2;" : "=h"(r) : "h"(a.__x), "h"(b.__x));                            \
        return __cudasem_half_bits(r);                                                           \
    }
__CUDASEM_HALF_BINARY(__hadd, "add.f16")
__CUDASEM_HALF_BINARY(__hsub, "sub.f16")
__CUDASEM_HALF_BINARY(__hmul, "mul.f16")
#if __CUDA_ARCH__ >= 800
__CUDASEM_HALF_BINARY(__hmin, "min.f16")
__CUDASEM_HALF_BINARY(__hmax, "max.f16")
#else
// `min.f16`/`max.f16` need sm_80 (PTX ISA, "Half Precision Floating-Point Instructions: min,
// max"); below it the float minimum of the two (exact: every half is a float), as ptxas
// would otherwise refuse the kernel.
__CUDASEM_FN __half __hmin(__half a, __half b) {
    return __float2half(__builtin_fminf(__half2float(a), __half2float(b)));
}
__CUDASEM_FN __half __hmax(__half a, __half b) {
    return __float2half(__builtin_fmaxf(__half2float(a), __half2float(b)));
}
#endif
#undef __CUDASEM_HALF_BINARY
__CUDASEM_FN __half __hfma(__half a, __half b, __half c) {
    unsigned short r;
    asm("fma.rn.f16 %0, %1, %2, %3;" : "=h"(r) : "h"(a.__x), "h"(b.__x), "h"(c.__x));
    return __cudasem_half_bits(r);
}
__CUDASEM_FN __half __hneg(__half a) { return __cudasem_half_bits(a.__x ^ 0x8000); }
__CUDASEM_FN __half __habs(__half a) { return __cudasem_half_bits(a.__x & 0x7fff); }
// There is no `div.f16`: the quotient is the float one, rounded to half (as cuda_fp16.h's).
__CUDASEM_FN __half __hdiv(__half a, __half b) {
    return __float2half(__half2float(a) / __half2float(b));
}
__CUDASEM_FN bool __heq(__half a, __half b) { return __half2float(a) == __half2float(b); }
__CUDASEM_FN bool __hne(__half a, __half b) { return __half2float(a) != __half2float(b); }
__CUDASEM_FN bool __hlt(__half a, __half b) { return __half2float(a) < __half2float(b); }
__CUDASEM_FN bool __hle(__half a, __half b) { return __half2float(a) <= __half2float(b); }
__CUDASEM_FN bool __hgt(__half a, __half b) { return __half2float(a) > __half2float(b); }
__CUDASEM_FN bool __hge(__half a, __half b) { return __half2float(a) >= __half2float(b); }
__CUDASEM_FN __half operator+(__half a, __half b) { return __hadd(a, b); }
__CUDASEM_FN __half operator-(__half a, __half b) { return __hsub(a, b); }
__CUDASEM_FN __half operator*(__half a, __half b) { return __hmul(a, b); }
__CUDASEM_FN __half operator/(__half a, __half b) { return __hdiv(a, b); }
__CUDASEM_FN __half operator-(__half a) { return __hneg(a); }
__CUDASEM_FN __half &operator+=(__half &a, __half b) { return a = __hadd(a, b); }
__CUDASEM_FN __half &operator-=(__half &a, __half b) { return a = __hsub(a, b); }
__CUDASEM_FN __half &operator*=(__half &a, __half b) { return a = __hmul(a, b); }
__CUDASEM_FN __half &operator/=(__half &a, __half b) { return a = __hdiv(a, b); }
__CUDASEM_FN bool operator==(__half a, __half b) { return __heq(a, b); }
__CUDASEM_FN bool operator!=(__half a, __half b) { return __hne(a, b); }
__CUDASEM_FN bool operator<(__half a, __half b) { return __hlt(a, b); }
__CUDASEM_FN bool operator<=(__half a, __half b) { return __hle(a, b); }
__CUDASEM_FN bool operator>(__half a, __half b) { return __hgt(a, b); }
__CUDASEM_FN bool operator>=(__half a, __half b) { return __hge(a, b); }

// ---------------------------------------------------------------------------------------------
// cooperative_groups: thread blocks, warp tiles, the grid
// ---------------------------------------------------------------------------------------------

// Grid barrier state (internal linkage: emitted only when `this_grid().sync()` is used).
static __device__ unsigned int __cudasem_grid_arrived;
static __device__ unsigned int __cudasem_grid_generation;

namespace cooperative_groups {

class thread_block {
  public:
    __CUDASEM_METHOD void sync() const { __syncthreads(); }
    __CUDASEM_METHOD unsigned int thread_rank() const {
        return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    }
    __CUDASEM_METHOD unsigned int num_threads() const {
        return blockDim.x * blockDim.y * blockDim.z;
    }
    __CUDASEM_METHOD unsigned int size() const { return num_threads(); }
    __CUDASEM_METHOD dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    __CUDASEM_METHOD dim3 thread_index() const {
        return dim3(threadIdx.x, threadIdx.y, threadIdx.z);
    }
    __CUDASEM_METHOD dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
};

__CUDASEM_FN thread_block this_thread_block() { return thread_block(); }
__CUDASEM_FN void sync(const thread_block &g) { g.sync(); }

// A tile of `Size` consecutive threads of the block (a power of two, at most 32): its collective
// operations take the mask of the tile's lanes in the warp.
template <unsigned int Size> class thread_block_tile {
    static_assert(Size > 0 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "tiled_partition: the tile size must be a power of two, at most 32");

  public:
    __CUDASEM_METHOD unsigned int mask() const {
        if (Size == 32)
            return 0xffffffffu;
        unsigned int lane = __nvvm_read_ptx_sreg_laneid();
        return ((1u << Size) - 1) << (lane & ~(Size - 1));
    }
    __CUDASEM_METHOD void sync() const { __syncwarp(mask()); }
    __CUDASEM_METHOD unsigned int thread_rank() const {
        return this_thread_block().thread_rank() & (Size - 1);
    }
    __CUDASEM_METHOD unsigned int num_threads() const { return Size; }
    __CUDASEM_METHOD unsigned int size() const { return Size; }
    __CUDASEM_METHOD unsigned int meta_group_rank() const {
        return this_thread_block().thread_rank() / Size;
    }
    __CUDASEM_METHOD unsigned int meta_group_size() const {
        return (this_thread_block().num_threads() + Size - 1) / Size;
    }
    template <class T> __CUDASEM_METHOD T shfl(T var, int src) const {
        return __shfl_sync(mask(), var, src, Size);
    }
    template <class T> __CUDASEM_METHOD T shfl_down(T var, unsigned int delta) const {
        return __shfl_down_sync(mask(), var, delta, Size);
    }
    template <class T> __CUDASEM_METHOD T shfl_up(T var, unsigned int delta) const {
        return __shfl_up_sync(mask(), var, delta, Size);
    }
    template <class T> __CUDASEM_METHOD T shfl_xor(T var, int lane_mask) const {
        return __shfl_xor_sync(mask(), var, lane_mask, Size);
    }
    // The tile's ballot, bit i for the tile's thread i. The vote is taken over the warp's
    // active lanes (one mask for every lane: lanes of different tiles execute this one
    // instruction together) and the tile's bits are kept.
    __CUDASEM_METHOD unsigned int ballot(int predicate) const {
        unsigned int lane = __nvvm_read_ptx_sreg_laneid();
        unsigned int votes = __ballot_sync(__activemask(), predicate) & mask();
        return Size == 32 ? votes : votes >> (lane & ~(Size - 1));
    }
    __CUDASEM_METHOD int any(int predicate) const { return ballot(predicate) != 0; }
    __CUDASEM_METHOD int all(int predicate) const {
        return ballot(predicate) == (Size == 32 ? 0xffffffffu : (1u << Size) - 1);
    }
};

template <unsigned int Size, class Parent>
__CUDASEM_FN thread_block_tile<Size> tiled_partition(const Parent &) {
    return thread_block_tile<Size>();
}
template <unsigned int Size> __CUDASEM_FN void sync(const thread_block_tile<Size> &g) { g.sync(); }

// The grid (a cooperative launch: every block must be resident, as cudaLaunchCooperativeKernel
// requires). `sync` is a generation barrier: thread 0 of each block arrives on a global counter;
// the last to arrive resets it and starts the next generation, which the others wait for.
class grid_group {
  public:
    __CUDASEM_METHOD void sync() const {
        __syncthreads();
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
            unsigned int generation = atomicAdd(&__cudasem_grid_generation, 0u);
            __threadfence();
            if (atomicAdd(&__cudasem_grid_arrived, 1u) == blocks - 1) {
                atomicExch(&__cudasem_grid_arrived, 0u);
                __threadfence();
                atomicAdd(&__cudasem_grid_generation, 1u);
            } else {
                while (atomicAdd(&__cudasem_grid_generation, 0u) == generation) {
                }
            }
            __threadfence();
        }
        __syncthreads();
    }
    __CUDASEM_METHOD unsigned long long thread_rank() const {
        unsigned long long block =
            (blockIdx.z * (unsigned long long)gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
        return block * this_thread_block().num_threads() + this_thread_block().thread_rank();
    }
    __CUDASEM_METHOD unsigned long long num_threads() const {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z *
               this_thread_block().num_threads();
    }
    __CUDASEM_METHOD unsigned long long size() const { return num_threads(); }
    __CUDASEM_METHOD bool is_valid() const { return true; }
};

__CUDASEM_FN grid_group this_grid() { return grid_group(); }
__CUDASEM_FN void sync(const grid_group &g) { g.sync(); }

// cooperative_groups/reduce.h: `reduce(tile, value, plus<T>())` and friends.
template <class T> struct plus {
    __CUDASEM_METHOD T operator()(T a, T b) const { return a + b; }
};
template <class T> struct less {
    __CUDASEM_METHOD T operator()(T a, T b) const { return a < b ? a : b; }
};
template <class T> struct greater {
    __CUDASEM_METHOD T operator()(T a, T b) const { return a > b ? a : b; }
};
template <unsigned int Size, class T, class Op>
__CUDASEM_FN T reduce(const thread_block_tile<Size> &g, T value, Op op) {
    for (unsigned int offset = Size / 2; offset > 0; offset /= 2)
        value = op(value, g.shfl_xor(value, (int)offset));
    return value;
}

} // namespace cooperative_groups


// ---------------------------------------------------------------------------------------------
// Host code: declarations only, so that a whole .cu program (main, cudaMalloc, kernel<<<...>>>)
// compiles; cudasem compiles the device side alone (--cuda-device-only) and runs the kernels from
// a launch file, so none of these is ever called.
// ---------------------------------------------------------------------------------------------

typedef __SIZE_TYPE__ size_t;
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
} cudaError_t;
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem, sharedMemPerBlock;
    int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
    int multiProcessorCount, maxThreadsPerMultiProcessor, major, minor;
};
#define cudaMemAttachGlobal 0x01

// What clang's `kernel<<<grid, block, shared, stream>>>(...)` calls.
extern "C" __host__ unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0,
                                                         void *stream = 0);
extern "C" __host__ cudaError_t cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0,
                                                  cudaStream_t stream = 0);
extern "C" {
__host__ cudaError_t cudaMalloc(void **p, size_t bytes);
__host__ cudaError_t cudaMallocManaged(void **p, size_t bytes, unsigned flags = cudaMemAttachGlobal);
__host__ cudaError_t cudaMallocHost(void **p, size_t bytes);
__host__ cudaError_t cudaFree(void *p);
__host__ cudaError_t cudaFreeHost(void *p);
__host__ cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind);
__host__ cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                     enum cudaMemcpyKind kind, cudaStream_t stream = 0);
__host__ cudaError_t cudaMemset(void *p, int value, size_t bytes);
__host__ cudaError_t cudaDeviceSynchronize(void);
__host__ cudaError_t cudaDeviceReset(void);
__host__ cudaError_t cudaGetLastError(void);
__host__ cudaError_t cudaPeekAtLastError(void);
__host__ const char *cudaGetErrorString(cudaError_t error);
__host__ const char *cudaGetErrorName(cudaError_t error);
__host__ cudaError_t cudaSetDevice(int device);
__host__ cudaError_t cudaGetDevice(int *device);
__host__ cudaError_t cudaGetDeviceCount(int *count);
__host__ cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
__host__ cudaError_t cudaStreamCreate(cudaStream_t *stream);
__host__ cudaError_t cudaStreamDestroy(cudaStream_t stream);
__host__ cudaError_t cudaStreamSynchronize(cudaStream_t stream);
__host__ cudaError_t cudaEventCreate(cudaEvent_t *event);
__host__ cudaError_t cudaEventDestroy(cudaEvent_t event);
__host__ cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
__host__ cudaError_t cudaEventSynchronize(cudaEvent_t event);
__host__ cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
__host__ cudaError_t cudaLaunchCooperativeKernel(const void *kernel, dim3 grid, dim3 block,
                                                 void **args, size_t shared = 0,
                                                 cudaStream_t stream = 0);
__host__ cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t bytes,
                                        size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyHostToDevice);
__host__ cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t bytes,
                                          size_t offset = 0,
                                          enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost);
}
template <class T> __host__ cudaError_t cudaMalloc(T **p, size_t bytes) {
    return cudaMalloc((void **)p, bytes);
}
template <class T>
__host__ cudaError_t cudaMallocManaged(T **p, size_t bytes, unsigned flags = cudaMemAttachGlobal) {
    return cudaMallocManaged((void **)p, bytes, flags);
}
template <class T> __host__ cudaError_t cudaMallocHost(T **p, size_t bytes) {
    return cudaMallocHost((void **)p, bytes);
}
template <class T>
__host__ cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t bytes,
                                        size_t offset = 0,
                                        enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    return cudaMemcpyToSymbol((const void *)&symbol, src, bytes, offset, kind);
}
template <class T>
__host__ cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t bytes,
                                          size_t offset = 0,
                                          enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    return cudaMemcpyFromSymbol(dst, (const void *)&symbol, bytes, offset, kind);
}
template <class K>
__host__ cudaError_t cudaLaunchCooperativeKernel(K *kernel, dim3 grid, dim3 block, void **args,
                                                 size_t shared = 0, cudaStream_t stream = 0) {
    return cudaLaunchCooperativeKernel((const void *)kernel, grid, block, args, shared, stream);
}

#endif
