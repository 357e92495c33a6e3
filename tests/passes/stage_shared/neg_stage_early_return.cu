// RUN: kltrans opt -p stage-shared
// CHECK-SKIP: every-thread: a thread may return before the copy
// Warps past the last row return first: they would never reach the copy's barrier.
#define PART 256
// kltrans: launch mv_ret grid=ceil_div(n_rows, 4) block=128
__global__ void mv_ret(const float* M, const float* v, float* out, int n_rows, int n_cols)
{
    int r = blockIdx.x * 4 + threadIdx.x / 32;
    if (r >= n_rows)
        return;
    float s = 0.0f;
    for (int c0 = 0; c0 < n_cols; c0 += PART) {
        int len = min(PART, n_cols - c0);
        for (int c = threadIdx.x % 32; c < len; c += 32)
            s += M[(size_t)r * n_cols + c0 + c] * v[c0 + c];
    }
    for (int o = 16; o; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0)
        out[r] = s;
}
