// RUN: kltrans opt -p stage-shared
// CHECK-SKIP: same-results: block machine
// The offset is moved inside the guarded block, after the place the copy would go: the
// staged stretch would not be the one the loop reads.
#define PART 256
// kltrans: launch mv_moved grid=ceil_div(n_rows, 4) block=128
__global__ void mv_moved(const float* M, const float* v, float* out, int n_rows, int n_cols)
{
    int r = blockIdx.x * 4 + threadIdx.x / 32;
    float s = 0.0f;
    for (int c0 = 0; c0 < n_cols; c0 += PART) {
        int len = min(PART, n_cols - c0);
        int at = c0;
        if (r < n_rows) {
            at = n_cols - c0 - len;
            for (int c = threadIdx.x % 32; c < len; c += 32)
                s += M[(size_t)r * n_cols + at + c] * v[at + c];
        }
    }
    for (int o = 16; o; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (r < n_rows && threadIdx.x % 32 == 0)
        out[r] = s;
}
