// RUN: kltrans opt -p unshare-row --assume reassoc
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: none: share-row folds with xor butterflies, not cg::reduce (the same fold)
// A 32-thread tile per row, folded by cg::reduce: one thread per row again, the tile and
// the lane gone with the folds.
// kltrans: launch softmax_tiles grid=ceil_div(rows, 128) block=128
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace coop = cooperative_groups;

__global__ void softmax_tiles(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* in = src + (size_t)r * cols;
    float* out = dst + (size_t)r * cols;
    float hi = -INFINITY;
    for (int k = 0; k < cols; k += 1)
        hi = fmaxf(hi, in[k]);
    float s = 0.0f;
    for (int k = 0; k < cols; k += 1)
        s += expf(in[k] - hi);
    const float inv = 1.0f / s;
    for (int k = 0; k < cols; k += 1)
        out[k] = expf(in[k] - hi) * inv;
}
