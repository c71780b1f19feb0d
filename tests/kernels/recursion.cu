// recursion: a recursive, non-inlined __device__ function (naive Fibonacci; clang turns one of the
// two recursive calls into a loop, the other stays a real recursive call.uni) with per-lane
// different depths (n[i] & 15, at most 15), so the call stacks of a warp have different heights.
// fact() is written recursively too, but clang's tail-recursion elimination turns it into a loop
// (an 8x unrolled loop plus a remainder loop marked `.pragma "nounroll";`).
#include "cudasem_cuda.h"

extern "C" __device__ __noinline__ int fib(int k) {
    if (k < 2)
        return k;
    return fib(k - 1) + fib(k - 2);
}

extern "C" __device__ __noinline__ unsigned fact(unsigned k) {
    return k <= 1 ? 1u : k * fact(k - 1);
}

extern "C" __global__ void recursion(const int *n, int *fibs, unsigned *facts, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) {
        int k = n[i] & 15;
        fibs[i] = fib(k);
        facts[i] = fact((unsigned)k);
    }
}
