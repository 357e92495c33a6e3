// kltrans: launch layernorm_forward grid=rows block=kThreads
// LayerNorm with a whole block per row: the kThreads threads stride over the row in one
// sweep (sum and sum of squares, var = E[x^2] - mean^2), cg::reduce folds each warp
// tile's partials, tile leaders park them in shared slots, and after one block barrier
// every thread adds the kWarps slots up itself. Then the block writes y.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr float kEps = 1e-5f;

__global__ void layernorm_forward(const float* x, const float* gamma, const float* beta,
                                  float* y, int rows, int cols) {
    __shared__ float slot_sum[kWarps];
    __shared__ float slot_sq[kWarps];

    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);

    int row = blockIdx.x;
    int tid = block.thread_rank();
    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    float sum = 0.0f;
    float sq = 0.0f;
    for (int c = tid; c < cols; c += kThreads) {
        float v = in[c];
        sum += v;
        sq += v * v;
    }
    sum = cg::reduce(tile, sum, cg::plus<float>());
    sq = cg::reduce(tile, sq, cg::plus<float>());
    if (tile.thread_rank() == 0) {
        slot_sum[tile.meta_group_rank()] = sum;
        slot_sq[tile.meta_group_rank()] = sq;
    }
    block.sync();

    sum = 0.0f;
    sq = 0.0f;
    for (int w = 0; w < kWarps; w++) {
        sum += slot_sum[w];
        sq += slot_sq[w];
    }
    float mean = sum / cols;
    float var = fmaxf(sq / cols - mean * mean, 0.0f);
    float rstd = 1.0f / sqrtf(var + kEps);

    for (int c = tid; c < cols; c += kThreads) {
        out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
