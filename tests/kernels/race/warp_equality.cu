// warp_equality: T-S2-7 (seed 002 §3.3), run by one warp. Verdict: ASSERT-FAIL (result[0] = 0);
// RACE under interleaving (on A[1], A[2]); NO-RACE under warp-sync.
#include "cudasem_cuda.h"

extern "C" __global__ void warp_equality(int *result) {
    __shared__ int A[32];
    unsigned tid = threadIdx.x;
    if (tid == 0) {
        A[0] = 1;
        A[1] = 1;
        A[2] = 1;
    }
    asm volatile("" ::: "memory");
    A[tid] = 0;
    asm volatile("" ::: "memory");
    if (tid == 0)
        result[0] = (A[0] == 1 || A[1] == 1 || A[2] == 1);
}
