// bench_matmul: tiled single-precision matrix multiply C = A * B for n x n row-major matrices with
// 16x16 shared-memory tiles (same computation as tests/opencl/bench_matmul.cl). Launch: n = 256,
// grid 16x16 of 16x16 blocks = 65536 threads. Out-of-range tile elements are 0 (any n works).
#include "cudasem_cuda.h"

#define TILE 16

extern "C" __global__ void bench_matmul(const float *A, const float *B, float *C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        int ac = t * TILE + tx;
        int br = t * TILE + ty;
        As[ty][tx] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
        Bs[ty][tx] = (br < n && col < n) ? B[br * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}
