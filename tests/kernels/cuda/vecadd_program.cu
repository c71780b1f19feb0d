// vecadd_program: a whole CUDA program as a programmer writes it, host code included. cudasem
// compiles the device side only; its header declares the CUDA runtime API so that main() and
// the <<<...>>> launches compile. Run it with a launch file (`cudasem launch` writes one).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main() {
    const int n = 1024;
    float *a, *b, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc((void **)&b, n * sizeof(float));
    cudaMallocManaged(&c, n * sizeof(float));
    float *h = (float *)malloc(n * sizeof(float));
    cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    dim3 grid((n + 255) / 256), block(256);
    vadd<<<grid, block>>>(a, b, c, n);
    vadd<<<4, 256, 0, 0>>>(a, b, c, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) printf("%s\n", cudaGetErrorString(err));
    cudaDeviceSynchronize();
    cudaMemcpy(h, c, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(a); cudaFree(b); cudaFree(c); free(h);
    return 0;
}
