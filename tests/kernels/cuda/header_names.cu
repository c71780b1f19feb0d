// header_names: one warp uses every name of cudasem's CUDA header once, and writes what each
// returned to r[lane * 32 + k] (ints) or f[lane * 8 + k] / d[lane * 4 + k] (floats); the test
// computes the same values in Rust. Launch: 1 block of 32 threads.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void header_names(int *r, float *f, double *d, int *ci, unsigned *cu,
                             unsigned long long *cull, long long *cll, float *cf, double *cd,
                             const int *ro) {
    unsigned lane = threadIdx.x;
    int *out = r + lane * 32;
    int v = (int)lane;
    out[0] = __shfl_sync(0xffffffff, v * 10, 3);
    out[1] = __shfl_up_sync(0xffffffff, v, 1);
    out[2] = __shfl_down_sync(0xffffffff, v, 2);
    out[3] = __shfl_xor_sync(0xffffffff, v, 1);
    out[4] = __shfl_sync(0xffffffff, v, 0, 8);
    out[5] = (int)__ballot_sync(0xffffffff, lane % 3 == 0);
    out[6] = __any_sync(0xffffffff, lane == 5);
    out[7] = __all_sync(0xffffffff, lane < 31);
    out[8] = (int)__activemask();
    __syncwarp();
    out[9] = __syncthreads_count(lane < 10);
    out[10] = __syncthreads_and(lane < 40);
    out[11] = __syncthreads_or(lane == 31);
    out[12] = (int)blockDim.x * 1000 + (int)gridDim.x * 100 + (int)blockIdx.x * 10 + warpSize;
    out[13] = __ldg(ro + lane);
    out[14] = __popc(lane) + __clz((int)lane) * 100;
    out[15] = (int)__brev(lane);
    out[16] = min((int)lane, 7) + max((int)lane, 20) * 100;

    // Atomics on shared counters: returned old values are schedule-dependent, final values not.
    atomicAdd(&ci[0], 1);
    atomicSub(&ci[1], 2);
    atomicMax(&ci[2], (int)lane);
    atomicMin(&ci[3], -(int)lane);
    atomicAnd(&ci[4], ~(1 << (lane % 8)));
    atomicOr(&ci[5], 1 << lane);
    atomicXor(&ci[6], 1 << (lane % 4));
    atomicCAS(&ci[7], 0, 99);
    atomicExch(&ci[8], 7);
    atomicAdd(&cu[0], 3u);
    atomicInc(&cu[1], 9u);
    atomicDec(&cu[2], 100u);
    atomicMax(&cu[3], lane * 2u);
    atomicMin(&cu[4], lane + 5u);
    atomicAdd(&cull[0], 1ull << 33);
    atomicCAS(&cull[1], 0ull, 5ull);
    atomicMax(&cll[0], -(long long)lane);
    atomicAdd(&cf[0], 0.5f);
    atomicExch(&cf[1], 2.5f);
    atomicAdd(&cd[0], 0.25);
    atomicAdd_block(&ci[9], 1);
    atomicAdd_system(&ci[10], 1);
    __threadfence_block();
    __threadfence();
    __threadfence_system();

    float x = (float)lane;
    f[lane * 8 + 0] = __shfl_down_sync(0xffffffff, x * 0.5f, 1);
    f[lane * 8 + 1] = sqrtf(x);
    f[lane * 8 + 2] = fminf(x, 3.0f) + fmaxf(x, 30.0f);
    f[lane * 8 + 3] = fabsf(-x);
    f[lane * 8 + 4] = fmaf(x, 2.0f, 1.0f);
    double y = (double)lane;
    d[lane * 4 + 0] = __shfl_xor_sync(0xffffffff, y * 1.5, 2);
    d[lane * 4 + 1] = sqrt(y);
    d[lane * 4 + 2] = fma(y, 3.0, 0.5);

    cg::thread_block block = cg::this_thread_block();
    block.sync();
    cg::thread_block_tile<4> t4 = cg::tiled_partition<4>(block);
    out[17] = (int)t4.thread_rank() + (int)t4.meta_group_rank() * 10;
    out[18] = t4.shfl(v, 3);
    out[19] = t4.shfl_up(v, 1);
    out[20] = t4.shfl_xor(v, 2);
    out[21] = (int)t4.ballot(v % 2 == 1);
    out[22] = t4.any(v == 6) + t4.all(v < 30) * 10;
    out[23] = cg::reduce(t4, v, cg::greater<int>()) + cg::reduce(t4, v, cg::less<int>()) * 100;
    t4.sync();
    out[24] = (int)block.thread_rank() + (int)block.size() * 100;
    cg::grid_group grid = cg::this_grid();
    grid.sync();
    out[25] = (int)grid.thread_rank() + (int)grid.size() * 100;
    uint3 t = threadIdx;
    dim3 b = blockDim;
    out[26] = (int)(t.x + b.x * 100);
}
