// reduce_warp_shfl: warp-level reduction with shfl.sync.down (no shared memory). Lane 0 of every
// warp writes its warp's sum to out[global warp index]. Needs full warps of 32 (mask 0xffffffff).
// cudasem: ptx-features=+ptx64
#include "cudasem_cuda.h"

extern "C" __global__ void reduce_warp_shfl(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? in[i] : 0;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __nvvm_shfl_sync_down_i32(0xffffffffu, v, offset, 31);
    if ((threadIdx.x & 31) == 0)
        out[i / 32] = v;
}
