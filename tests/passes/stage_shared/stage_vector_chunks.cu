// RUN: kltrans opt -p stage-shared
// GATE: tests/data/workloads/matvec
// ROUNDTRIP: model: unstage-shared removes the barrier behind the guarded block too
// Eight warps per block, a warp per row, the columns walked in chunks of CHUNK: every
// warp reads the same chunk of v. Stage the chunk in shared memory once per block (a
// coalesced copy by all 256 threads, outside the row guard, so every thread reaches the
// barriers) and read it from there.
#define CHUNK 256
#define WARPS 8
// kltrans: launch mv_chunks grid=ceil_div(n_rows, WARPS) block=WARPS*32
__global__ void mv_chunks(const float* __restrict__ M, const float* __restrict__ v,
                          float* __restrict__ out, int n_rows, int n_cols)
{
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int row = blockIdx.x * WARPS + warp;
    const float* m = M + (size_t)min(row, n_rows - 1) * n_cols;
    float partial = 0.0f;
    for (int c0 = 0; c0 < n_cols; c0 += CHUNK) {
        int len = min(CHUNK, n_cols - c0);
        if (row < n_rows) {
            for (int j = lane; j < len; j += 32)
                partial += m[c0 + j] * v[c0 + j];
        }
    }
    for (int s = 16; s >= 1; s /= 2)
        partial += __shfl_down_sync(0xffffffff, partial, s);
    if (lane == 0 && row < n_rows)
        out[row] = partial;
}
