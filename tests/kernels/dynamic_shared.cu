// dynamic_shared: reads and writes an `extern __shared__` array (PTX: `.extern .shared .align 4
// .b8 dyn[];`), whose size is given at launch time (blockDim.x * 4 bytes are needed). Each block
// reverses its segment of the input through the dynamic shared array.
#include "cudasem_cuda.h"

extern "C" __shared__ int dyn[];

extern "C" __global__ void dynamic_shared(const int *in, int *out, int n) {
    int t = threadIdx.x;
    int base = blockIdx.x * blockDim.x;
    int i = base + t;
    dyn[t] = (i < n) ? in[i] : -1;
    __syncthreads();
    int r = blockDim.x - 1 - t;
    if (i < n)
        out[i] = dyn[r];
}
