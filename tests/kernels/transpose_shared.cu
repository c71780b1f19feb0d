// transpose_shared: out = transpose(in) for a rows x cols row-major float matrix, through an
// 8x(8+1) padded shared tile (block 8x8, 2D grid over the input: x over cols, y over rows).
#include "cudasem_cuda.h"

#define T 8

extern "C" __global__ void transpose_shared(const float *in, float *out, int rows, int cols) {
    __shared__ float tile[T][T + 1];
    int x = blockIdx.x * T + threadIdx.x;
    int y = blockIdx.y * T + threadIdx.y;
    if (x < cols && y < rows)
        tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    int tx = blockIdx.y * T + threadIdx.x; // column in out = row in in
    int ty = blockIdx.x * T + threadIdx.y; // row in out = column in in
    if (tx < rows && ty < cols)
        out[ty * rows + tx] = tile[threadIdx.x][threadIdx.y];
}
