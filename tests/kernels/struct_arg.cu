// struct_arg: a struct passed by value (`.param .align 8 .b8 p[24]`): a pointer, an int count, a
// float scale and a short offset. out[i] = (float)(in[i] + p.offset) * p.scale for i < p.n.
#include "cudasem_cuda.h"

struct Params {
    const int *in;
    int n;
    float scale;
    short offset;
};

extern "C" __global__ void struct_arg(Params p, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        out[i] = (float)(p.in[i] + p.offset) * p.scale;
}
