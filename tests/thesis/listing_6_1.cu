// listing_6_1.cu: Listing 6.1 of Habermaier's thesis (CUDA C): a spin lock whose acquiring loop
// livelocks when two threads of the SAME warp compete under the stack-based branching algorithm
// (no independent thread scheduling). listing_6_1.ptx is clang's PTX for it (scripts/regen-ptx.sh);
// it contains NO thesis-dialect instructions, so the loader's Step 6 must inject the control-flow
// tokens. Same expected behaviour as listing_6_2.ptx: livelock with 1 block x 2 threads,
// termination (lock = 1) with 2 blocks x 1 thread.
// Deviations: `extern "C"` so the entry is named `kernel`; atomicCAS comes from the shipped header.
#include "cudasem_cuda.h"

extern "C" __device__ int lock = 1;        // listing line 1

extern "C" __global__ void kernel()        // listing line 3
{
    while (true)                           // listing line 5
    {
        if (atomicCAS(&lock, 1, 0) == 1)   // listing line 7: Acquire lock
        {
            break;                         // listing line 9
        }
    }

    // Inside critical section
    lock = 1;                              // listing line 14: Release lock
}
