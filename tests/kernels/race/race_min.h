// race_min.h: what the race corpus needs beyond ../cuda_min.h (clang 14 builtins only).
#ifndef CUDASEM_RACE_MIN_H
#define CUDASEM_RACE_MIN_H
#include "cuda_min.h"

// __syncwarp(): bar.warp.sync (needs PTX >= 6.0: files using it carry the ptx64 marker).
#define __syncwarp() __nvvm_bar_warp_sync(0xffffffffu)
// atomicAdd_block: atom.add with .cta scope (sm_60+).
static __device__ __forceinline__ int atomicAdd_block(int *p, int v) { return __nvvm_atom_cta_add_gen_i(p, v); }
// clang 14 keeps a static __shared__ scalar's load on the far side of __syncthreads() when global
// alias analysis proves the barrier intrinsic cannot touch it (the PTX then races: `cudasem check`
// reports it). Kernels that publish a shared scalar through a barrier use this one, a memory clobber.
#define SYNCTHREADS() asm volatile("bar.sync 0;" ::: "memory")
// A barrier the optimiser cannot merge with another: `tag` makes each site's text unique.
#define BARRIER_AT(tag) asm volatile("bar.sync 0; // " #tag ::: "memory")
// Keeps plain loads and stores in place and in order (no instruction).
#define COMPILER_FENCE() asm volatile("" ::: "memory")
#endif
