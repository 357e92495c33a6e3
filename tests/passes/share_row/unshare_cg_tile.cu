// RUN: kltrans opt -p unshare-row --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: none: share-row folds with xor butterflies, not cg::reduce (the same fold)
// A 32-thread tile per row, folded by cg::reduce: one thread per row again, the tile and
// the lane gone with the folds.
// kltrans: launch softmax_tiles grid=ceil_div(rows, 4) block=128
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace coop = cooperative_groups;

__global__ void softmax_tiles(const float* src, float* dst, int rows, int cols)
{
    coop::thread_block_tile<32> t32 = coop::tiled_partition<32>(coop::this_thread_block());
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (r >= rows) return;
    const float* in = src + (size_t)r * cols;
    float* out = dst + (size_t)r * cols;
    float hi = -INFINITY;
    for (int k = t32.thread_rank(); k < cols; k += t32.size())
        hi = fmaxf(hi, in[k]);
    hi = coop::reduce(t32, hi, coop::greater<float>());
    float s = 0.0f;
    for (int k = t32.thread_rank(); k < cols; k += t32.size())
        s += expf(in[k] - hi);
    const float inv = 1.0f / coop::reduce(t32, s, coop::plus<float>());
    for (int k = t32.thread_rank(); k < cols; k += t32.size())
        out[k] = expf(in[k] - hi) * inv;
}
