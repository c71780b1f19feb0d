// indirect_call: calls through a function pointer picked per lane from a __device__ table of
// function addresses (`.global .align 8 .u64 ops[3] = {add1, dbl, neg};`): PTX `call` through a
// register with a `prototype_N : .callprototype` declaration, i.e. a divergent indirect call.
#include "cudasem_cuda.h"

typedef int (*op_t)(int);

extern "C" __device__ __noinline__ int add1(int x) { return x + 1; }
extern "C" __device__ __noinline__ int dbl(int x) { return 2 * x; }
extern "C" __device__ __noinline__ int neg(int x) { return -x; }

extern "C" __device__ op_t ops[3] = {add1, dbl, neg};

extern "C" __global__ void indirect_call(const int *sel, const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    op_t f = ops[(unsigned)sel[i] % 3u];
    out[i] = f(in[i]);
}
