// RUN: kltrans opt -p 'row-per-warp{group=cols,threads=BLOCK,width=ROW_W,rank=lane_id,gsize=GS}'
// Row L2 normalization: block size and row width from macros, an early exit, `i++`
// loops, the sum of squares kept whole in every thread.
// kltrans: launch l2rows grid=ceil_div(n_rows, 128) block=BLOCK
#define BLOCK 128
#define ROW_W 2048

extern "C" __global__ void l2rows(const float* __restrict__ in, float* __restrict__ out,
                                  int n_rows, int n_cols)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = r < n_rows;
    if (!live) {
        return;
    }
    const float* src = in + (size_t)r * n_cols;
    float* dst = out + (size_t)r * n_cols;
    float ss = 0.0f;
    for (int i = 0; i < n_cols; i++) {
        ss += src[i] * src[i];
    }
    const float scale = ss > 0.0f ? rsqrtf(ss) : 0.0f;
    for (int i = 0; i < n_cols; i++) {
        dst[i] = src[i] * scale;
    }
}
