// bench_alu: ALU-bound benchmark, the same computation as tests/kernels/bench_alu.cu: every
// work-item iterates an integer hash 64 times on its own value. 65536 work-items (256 groups of
// 256). Run: oclgrind-kernel --num-threads 1 bench_alu.sim
__kernel void bench_alu(__global const uint *in, __global uint *out, int n) {
    int i = get_global_id(0);
    if (i >= n)
        return;
    uint x = in[i];
    for (int k = 0; k < 64; ++k) {
        x = x * 1664525u + 1013904223u;
        x ^= x >> 13;
        x += (uint)k * 0x9E3779B9u;
        x ^= x << 7;
    }
    out[i] = x;
}
