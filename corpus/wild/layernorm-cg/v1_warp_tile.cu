// kltrans: launch layernorm_forward grid=ceil_div(rows * 32, 256) block=256
// LayerNorm with one 32-thread tile (a warp) per row: the flat thread index is split
// into a row (index / 32) and a lane (index % 32); the lanes stride over the row, and
// the partial sums meet through tile shuffles. Still two passes over the row for the
// statistics (mean, then the variance around it) and a third for y.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr float kEps = 1e-5f;

// sum over the 32 lanes of the tile, returned to every lane
__device__ float tile_sum(const cg::thread_block_tile<32>& tile, float v) {
    for (int offset = tile.size() / 2; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    return tile.shfl(v, 0);
}

__global__ void layernorm_forward(const float* x, const float* gamma, const float* beta,
                                  float* y, int rows, int cols) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);

    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int row = idx / 32;
    int lane = idx % 32;
    if (row >= rows) return;  // the whole tile leaves together

    const float* in = x + (size_t)row * cols;
    float* out = y + (size_t)row * cols;

    float sum = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        sum += in[c];
    }
    float mean = tile_sum(tile, sum) / cols;

    float sq = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float d = in[c] - mean;
        sq += d * d;
    }
    float rstd = 1.0f / sqrtf(tile_sum(tile, sq) / cols + kEps);

    for (int c = lane; c < cols; c += 32) {
        out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    }
}
