// kltrans: launch row_sum grid=ceil_div(rows, 4) block=128
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void row_sum(const float* x, float* y, int rows, int cols)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (r >= rows) {
        return;
    }
    float s = 0.0f;
    for (int c = tile.thread_rank(); c < cols; c += tile.size()) {
        s += x[(size_t)r * cols + c];
    }
    for (int o = tile.size() / 2; o > 0; o /= 2) {
        s += tile.shfl_down(s, o);
    }
    if (tile.thread_rank() == 0) {
        y[r] = s;
    }
}
