// stream_race: two kernels writing one buffer. In different streams they run concurrently and
// race on buf[i]; in one stream the second starts after the first has completed, and the final
// values are the second's.
#include "../cuda_min.h"

extern "C" __global__ void fill(int *buf, int value) {
    buf[blockIdx_x * blockDim_x + threadIdx_x] = value;
}

extern "C" __global__ void add_one(int *buf) {
    int i = blockIdx_x * blockDim_x + threadIdx_x;
    buf[i] = buf[i] + 1;
}
