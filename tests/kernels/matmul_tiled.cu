// matmul_tiled: C = A * B for n x n row-major int matrices, 8x8 shared-memory tiles, 2D grid and
// 2D blocks (block must be 8x8). Out-of-range tile elements are loaded as 0, so any n works.
// Exercises: %tid.y/%ctaid.y, two __shared__ arrays, a loop over tiles with two barriers.
#include "cudasem_cuda.h"

#define TILE 8

extern "C" __global__ void matmul_tiled(const int *A, const int *B, int *C, int n) {
    __shared__ int As[TILE][TILE];
    __shared__ int Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    int acc = 0;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        int ac = t * TILE + tx;
        int br = t * TILE + ty;
        As[ty][tx] = (row < n && ac < n) ? A[row * n + ac] : 0;
        Bs[ty][tx] = (br < n && col < n) ? B[br * n + col] : 0;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}
