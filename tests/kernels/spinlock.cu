// spinlock: a global spin lock (atomicCAS to acquire, atomicExch to release) protecting a
// non-atomic read-modify-write of a counter. Only thread 0 of each block takes the lock, so no
// two lanes of one warp ever compete for it and the kernel terminates under lock-step (stack
// based) execution as well as with independent thread scheduling. The critical section uses
// volatile accesses and membar.gl (__threadfence) before the release.
#include "cudasem_cuda.h"

extern "C" __global__ void spinlock(int *lock, int *counter, int iters) {
    if (threadIdx.x == 0) {
        for (int k = 0; k < iters; ++k) {
            while (atomicCAS(lock, 0, 1) != 0) {
            }
            __threadfence();
            volatile int *c = counter;
            *c = *c + 1;
            __threadfence();
            atomicExch(lock, 0);
        }
    }
}
