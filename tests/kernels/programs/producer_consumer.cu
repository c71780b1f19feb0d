// producer_consumer: a consumer kernel spins on a flag that a producer kernel, launched in another
// stream, sets. It terminates only if the producer's block can become resident while the
// consumer's blocks occupy SMs: with 2 SMs of one block each, a consumer grid of 2 blocks fills
// both and spins forever; a consumer grid of 1 block leaves an SM for the producer.
#include "cudasem_cuda.h"

extern "C" __global__ void consumer(volatile int *flag, int *out) {
    while (*flag == 0) {
    }
    out[blockIdx.x] = *flag;
}

extern "C" __global__ void producer(volatile int *flag) {
    __threadfence();
    *flag = 42;
}
