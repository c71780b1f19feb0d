// cuda_min.h: the few CUDA keywords and intrinsics the corpus kernels need, for compiling with
// clang WITHOUT the CUDA SDK (`clang --cuda-device-only -nocudainc -nocudalib`). Only clang
// builtins are used, so the generated PTX depends on nothing but the compiler.
//
// Notes on clang 14 (checked):
//   * __syncthreads() is a clang builtin (bar.sync 0); __nvvm_barrier0 does not exist in clang 14.
//   * __threadfence() does not exist: use __nvvm_membar_gl() (membar.gl).
//   * __nvvm_brev32 does not exist: __builtin_bitreverse32 gives brev.b32.
//   * warp intrinsics (__nvvm_vote_*_sync, __nvvm_shfl_sync_*) need PTX >= 6.0 in clang 14:
//     files that use them carry the marker `// cudasem: ptx-features=+ptx64` (see
//     scripts/regen-ptx.sh).
#ifndef CUDASEM_CUDA_MIN_H
#define CUDASEM_CUDA_MIN_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __restrict__ __restrict

#define threadIdx_x (__nvvm_read_ptx_sreg_tid_x())
#define threadIdx_y (__nvvm_read_ptx_sreg_tid_y())
#define threadIdx_z (__nvvm_read_ptx_sreg_tid_z())
#define blockDim_x (__nvvm_read_ptx_sreg_ntid_x())
#define blockDim_y (__nvvm_read_ptx_sreg_ntid_y())
#define blockIdx_x (__nvvm_read_ptx_sreg_ctaid_x())
#define blockIdx_y (__nvvm_read_ptx_sreg_ctaid_y())
#define gridDim_x (__nvvm_read_ptx_sreg_nctaid_x())
#define gridDim_y (__nvvm_read_ptx_sreg_nctaid_y())
#define laneId (__nvvm_read_ptx_sreg_laneid())

#define FULL_MASK 0xffffffffu

// __syncthreads() is already a clang builtin.
static __device__ __forceinline__ void __threadfence(void) { __nvvm_membar_gl(); }
static __device__ __forceinline__ void __threadfence_block(void) { __nvvm_membar_cta(); }

static __device__ __forceinline__ int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
static __device__ __forceinline__ unsigned atomicAdd(unsigned *p, unsigned v) {
    return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v);
}
static __device__ __forceinline__ int atomicCAS(int *p, int cmp, int val) {
    return __nvvm_atom_cas_gen_i(p, cmp, val);
}
static __device__ __forceinline__ int atomicExch(int *p, int v) { return __nvvm_atom_xchg_gen_i(p, v); }
static __device__ __forceinline__ int atomicMax(int *p, int v) { return __nvvm_atom_max_gen_i(p, v); }

static __device__ __forceinline__ int __popc(unsigned x) { return __builtin_popcount(x); }
static __device__ __forceinline__ int __clz(unsigned x) { return x == 0 ? 32 : __builtin_clz(x); }
static __device__ __forceinline__ unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
static __device__ __forceinline__ int __mulhi(int a, int b) { return __nvvm_mulhi_i(a, b); }
static __device__ __forceinline__ unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return __nvvm_mulhi_ull(a, b);
}
static __device__ __forceinline__ long long __mul64hi(long long a, long long b) { return __nvvm_mulhi_ll(a, b); }

#endif
