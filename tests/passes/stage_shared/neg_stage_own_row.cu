// RUN: kltrans opt -p stage-shared
// CHECK-SKIP: uniform-read: no read-only global array
// Row sums: each warp reads only its own row (a pointer that differs between warps), so
// no stretch is read by the whole block.
// kltrans: launch row_sums grid=ceil_div(rows, 4) block=128
__global__ void row_sums(const float* a, float* sums, int rows, int cols)
{
    int r = blockIdx.x * 4 + threadIdx.x / 32;
    const float* mine = a + (size_t)min(r, rows - 1) * cols;
    float s = 0.0f;
    for (int c = threadIdx.x % 32; c < cols; c += 32)
        s += mine[c];
    for (int o = 16; o; o >>= 1)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (r < rows && threadIdx.x % 32 == 0)
        sums[r] = s;
}
