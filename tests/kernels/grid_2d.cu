// grid_2d: a 2D grid of 2D blocks (and %tid.z / %ntid.z read, for z=1 launches). Every thread of
// a width x height image writes out[y*width+x] = y * 1000 + x + 100000 * threadIdx.z; threads
// outside the image do nothing. Also writes nctaid/ntid in y into the first two elements of dims.
#include "cudasem_cuda.h"

extern "C" __global__ void grid_2d(int *out, int *dims, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x == 0 && y == 0) {
        dims[0] = gridDim.y;
        dims[1] = blockDim.y;
    }
    if (x < width && y < height)
        out[y * width + x] = y * 1000 + x + 100000 * (int)threadIdx.z;
}
