// RUN: kltrans opt -p stage-shared
// CHECK-SKIP: fits: 65536 bytes of static shared memory is over 49152
// Chunks of 16384 floats are 64 KiB: more than a block may declare statically.
#define BIG 16384
// kltrans: launch mv_big grid=ceil_div(n_rows, 4) block=128
__global__ void mv_big(const float* M, const float* v, float* out, int n_rows, int n_cols)
{
    int r = blockIdx.x * 4 + threadIdx.x / 32;
    float s = 0.0f;
    for (int c0 = 0; c0 < n_cols; c0 += BIG) {
        int len = min(BIG, n_cols - c0);
        if (r < n_rows)
            for (int c = threadIdx.x % 32; c < len; c += 32)
                s += M[(size_t)r * n_cols + c0 + c] * v[c0 + c];
    }
    for (int o = 16; o; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (r < n_rows && threadIdx.x % 32 == 0)
        out[r] = s;
}
