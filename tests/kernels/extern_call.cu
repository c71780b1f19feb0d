// extern_call: calls to functions declared without a body (as in GPUVerify's test suite, where
// such a call returns an arbitrary value): PTX cannot say what `nondet` returns or what `mark`
// does, so the launch file says it (`extern_calls`); without that cudasem refuses the launch,
// naming the function. Here every call of nondet returns the launch's value v (a .s32), and
// mark returns nothing (and writes no memory):
//   out[i] = v * i + 1 for i < n.
#include "cudasem_cuda.h"

extern "C" __device__ int nondet(void);
extern "C" __device__ void mark(int i);

extern "C" __global__ void extern_call(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        mark(i);
        out[i] = nondet() * i + 1;
    }
}
