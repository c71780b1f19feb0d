// nested_divergence: a loop with a per-lane trip count containing an if whose `then` side holds a
// second, nested if; the sides read different arrays so the branches are not if-converted.
#include "cudasem_cuda.h"

extern "C" __global__ void nested_divergence(const int *trips, const int *a, const int *b, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int acc = 0;
    int t = trips[i];
    for (int k = 0; k < t; ++k) {
        if ((i + k) & 1) {
            if (k & 2)
                acc += a[(i + k) % n];
            else
                acc -= b[(i + k) % n];
        } else {
            acc ^= k;
        }
    }
    out[i] = acc;
}
