// RUN: kltrans opt -p unshare-row
// CHECK-SKIP: reduction-ops: --assume reassoc
// One thread per row adds the row in column order, not in the warp's order: a float
// sum reassociated needs --assume reassoc.
// kltrans: launch sums grid=ceil_div(rows, 4) block=128
__global__ void sums(const float* src, float* dst, int rows, int cols)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (r >= rows) return;
    float t = 0.0f;
    for (int k = threadIdx.x % 32; k < cols; k += 32)
        t += src[(size_t)r * cols + k];
    for (int o = 16; o > 0; o >>= 1)
        t += __shfl_xor_sync(0xffffffffu, t, o);
    if (threadIdx.x % 32 == 0) dst[r] = t;
}
