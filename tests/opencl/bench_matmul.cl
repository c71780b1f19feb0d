// bench_matmul: tiled single-precision matrix multiply C = A * B for n x n row-major matrices with
// 16x16 tiles in local memory, the same computation as tests/kernels/bench_matmul.cu. Launch:
// n = 256, NDRange 256x256 with 16x16 work-groups = 65536 work-items.
#define TILE 16

__kernel void bench_matmul(__global const float *A, __global const float *B, __global float *C, int n) {
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int row = get_group_id(1) * TILE + ty;
    int col = get_group_id(0) * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        int ac = t * TILE + tx;
        int br = t * TILE + ty;
        As[ty][tx] = (row < n && ac < n) ? A[row * n + ac] : 0.0f;
        Bs[ty][tx] = (br < n && col < n) ? B[br * n + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < n && col < n)
        C[row * n + col] = acc;
}
