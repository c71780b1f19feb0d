// ticket_race: a race that only some schedules make. Two threads of different warps take
// tickets from an atomic counter; whoever takes ticket 0 reads x, whoever takes ticket 1 writes
// x (the value it already holds). When thread 0 (warp 0) takes ticket 0 nothing races; when
// thread 32 (warp 1) takes it, its read and thread 0's write are unordered. Every schedule ends
// in the same memory, so checking one schedule per final outcome cannot see it: `check
// --explore` must check every execution. Verdict: RACE (with --explore; not in round-robin).
#include "cudasem_cuda.h"

extern "C" __global__ void ticket_race(int *counter, int *x, int *out) {
    unsigned tid = threadIdx.x;
    if (tid == 32) {
        if (atomicAdd(counter, 1) == 0)
            out[0] = x[0];
    } else if (tid == 0) {
        if (atomicAdd(counter, 1) == 1)
            x[0] = 0;
    }
}
