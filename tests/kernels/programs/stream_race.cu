// stream_race: two kernels writing one buffer. In different streams they run concurrently and
// race on buf[i]; in one stream the second starts after the first has completed, and the final
// values are the second's.
#include "cudasem_cuda.h"

extern "C" __global__ void fill(int *buf, int value) {
    buf[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

extern "C" __global__ void add_one(int *buf) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = buf[i] + 1;
}
