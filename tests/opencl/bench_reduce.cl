// bench_reduce: local-memory tree reduction of 65536 ints, the same computation as
// tests/kernels/bench_reduce.cu: 256 work-groups of 256, each writes its partial sum to
// out[group]. Work-group size must be a power of two <= 256.
__kernel void bench_reduce(__global const int *in, __global int *out, int n) {
    __local int s[256];
    uint tid = get_local_id(0);
    uint i = get_global_id(0);
    s[tid] = (i < (uint)n) ? in[i] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = get_local_size(0) / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0)
        out[get_group_id(0)] = s[0];
}
