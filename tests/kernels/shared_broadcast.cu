// shared_broadcast: thread 0 of each block writes a __shared__ variable, __syncthreads(), then every
// thread reads it: the most common CUDA pattern. Before the shipped header made __syncthreads() a
// compiler memory barrier, clang -O2 loaded `s` before the bar.sync on the path of threads != 0
// (alias analysis proved the barrier builtin could not touch a non-escaped shared variable): wrong
// output, and a race that nvcc's code does not have. The scalar, a shared array and a shared
// struct; each is read only after the barrier in the PTX.
#include "cudasem_cuda.h"

struct pair {
    int a;
    int b;
};

extern "C" __global__ void shared_broadcast(int *out, const int *in) {
    __shared__ int s;
    __shared__ int arr[2];
    __shared__ pair p;
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        s = in[blockIdx.x];
        arr[0] = 2 * in[blockIdx.x];
        arr[1] = 3 * in[blockIdx.x];
        p.a = in[blockIdx.x] + 10;
        p.b = in[blockIdx.x] + 20;
    }
    __syncthreads();
    out[g] = s + 1 + arr[threadIdx.x & 1] + p.a * p.b;
}
