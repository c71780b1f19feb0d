// histogram_float: a weighted histogram. Every thread adds weight[i] to bins[key[i] % nbins]
// with a float atomicAdd and counts the key with an unsigned atomicAdd; threads of one warp
// collide on the same bins. Weights are multiples of 1/4, so every order of the additions gives
// the same float sums.
__global__ void histogram_float(const unsigned *key, const float *weight, float *bins,
                                unsigned *counts, int n, int nbins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned b = key[i] % nbins;
        atomicAdd(&bins[b], weight[i]);
        atomicAdd(&counts[b], 1u);
    }
}
