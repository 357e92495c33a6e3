// kltrans: launch row_scan grid=ceil_div(rows, 4) block=128
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void row_scan(const float* x, float* y, int rows, int cols)
{
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (r >= rows) {
        return;
    }
    float carry = 0.0f;
    for (int c0 = 0; c0 < cols; c0 += 32) {
        int c = c0 + tile.thread_rank();
        float v = c < cols ? x[(size_t)r * cols + c] : 0.0f;
        for (int o = 1; o < 32; o *= 2) {
            float u = tile.shfl_up(v, o);
            if (tile.thread_rank() >= o) {
                v += u;
            }
        }
        if (c < cols) {
            y[(size_t)r * cols + c] = carry + v;
        }
        carry += tile.shfl(v, 31);
    }
}
