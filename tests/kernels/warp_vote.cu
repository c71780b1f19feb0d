// warp_vote: vote.sync.ballot / vote.sync.all / vote.sync.any over the predicate in[i] > 0.
// Lane 0 of each warp writes ballot, all and any to out[3*w .. 3*w+2] (w = global warp index).
// Needs full warps of 32.
// cudasem: ptx-features=+ptx64
#include "cudasem_cuda.h"

extern "C" __global__ void warp_vote(const int *in, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred = (i < n) && in[i] > 0;
    unsigned ballot = __nvvm_vote_ballot_sync(0xffffffffu, pred);
    unsigned all = __nvvm_vote_all_sync(0xffffffffu, pred);
    unsigned any = __nvvm_vote_any_sync(0xffffffffu, pred);
    if ((threadIdx.x & 31) == 0) {
        int w = i / 32;
        out[3 * w] = ballot;
        out[3 * w + 1] = all;
        out[3 * w + 2] = any;
    }
}
