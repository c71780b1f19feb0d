// stream_handoff: what a grid learns through release/acquire from another stream is passed on
// to the later launches of its own stream, and a release passes on what its own stream's earlier
// launches did (happens-before is transitive: thesis 5.7's stream order composed with the PTX
// memory model's release/acquire patterns, PTX ISA "Memory Consistency Model").
//
// - `write_and_signal` (stream 1) writes data[t] and releases flag; `wait_flag` (stream 0)
//   acquires it; `read_data`, after `wait_flag` in stream 0, reads data: no race.
// - `write_data` then `signal` (stream 0) write data and release flag; `wait_then_read`
//   (stream 1) acquires flag and reads data: no race.
// - `read_data` in stream 0 with `write_data` in stream 1 and no flag: a race.
#include "cudasem_cuda.h"

extern "C" __global__ void write_data(int *data) {
    data[threadIdx.x] = threadIdx.x + 1;
}

extern "C" __global__ void signal(volatile int *flag) {
    if (threadIdx.x == 0) {
        __threadfence();
        *flag = 1;
    }
}

extern "C" __global__ void write_and_signal(int *data, volatile int *flag) {
    data[threadIdx.x] = threadIdx.x + 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        *flag = 1;
    }
}

extern "C" __global__ void wait_flag(volatile int *flag) {
    if (threadIdx.x == 0) {
        while (*flag == 0) {
        }
        __threadfence();
    }
    __syncthreads();
}

extern "C" __global__ void read_data(const int *data, int *out) {
    out[threadIdx.x] = data[threadIdx.x];
}

extern "C" __global__ void wait_then_read(volatile int *flag, const int *data, int *out) {
    if (threadIdx.x == 0) {
        while (*flag == 0) {
        }
        __threadfence();
    }
    __syncthreads();
    out[threadIdx.x] = data[threadIdx.x];
}
