// coop_sum: cooperative groups. Each tile of 8 threads sums its elements with shfl_down
// (tile8_sums[i / 8]); each warp tile sums with cg::reduce and adds to the block's sum; after
// this_grid().sync() (a cooperative launch: all blocks resident) every block writes the grid's
// total, read from the other blocks' partial sums.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void coop_sum(const int *in, int *tile8_sums, int *partial, int *total, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::grid_group grid = cg::this_grid();
    __shared__ int block_sum;
    if (block.thread_rank() == 0)
        block_sum = 0;
    block.sync();

    unsigned i = grid.thread_rank();
    int v = i < n ? in[i] : 0;

    cg::thread_block_tile<8> tile8 = cg::tiled_partition<8>(block);
    int s8 = v;
    for (unsigned offset = tile8.size() / 2; offset > 0; offset /= 2)
        s8 += tile8.shfl_down(s8, offset);
    if (tile8.thread_rank() == 0)
        tile8_sums[i / 8] = s8;

    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int s32 = cg::reduce(warp, v, cg::plus<int>());
    if (warp.thread_rank() == 0)
        atomicAdd(&block_sum, s32);
    block.sync();
    if (block.thread_rank() == 0)
        partial[blockIdx.x] = block_sum;

    grid.sync();
    if (block.thread_rank() == 0) {
        int sum = 0;
        for (unsigned b = 0; b < gridDim.x; ++b)
            sum += partial[b];
        total[blockIdx.x] = sum;
    }
}
