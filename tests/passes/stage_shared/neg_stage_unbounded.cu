// RUN: kltrans opt -p stage-shared
// CHECK-SKIP: fits: the bound `n_cols` is not at most a known size
// The loop runs over the whole vector, whose length is only known at run time: no
// static shared array holds it (chunk the loop first).
// kltrans: launch mv_whole grid=ceil_div(n_rows, 4) block=128
__global__ void mv_whole(const float* M, const float* v, float* out, int n_rows, int n_cols)
{
    int r = blockIdx.x * 4 + threadIdx.x / 32;
    float s = 0.0f;
    if (r < n_rows)
        for (int c = threadIdx.x % 32; c < n_cols; c += 32)
            s += M[(size_t)r * n_cols + c] * v[c];
    for (int o = 16; o; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (r < n_rows && threadIdx.x % 32 == 0)
        out[r] = s;
}
