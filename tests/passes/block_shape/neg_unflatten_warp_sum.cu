// RUN: kltrans opt -p 'unflatten-block{fast=y}'
// CHECK-SKIP: warps: the warps change
// Eight rows of 32 lanes, each row summed by a warp; with the lanes on threadIdx.y a warp
// would hold one lane of each of 32 rows.
// kltrans: launch row_sums grid=ceil_div(rows, 8) block=256
__global__ void row_sums(const float* x, float* out, int rows)
{
    int row = blockIdx.x * 8 + threadIdx.x / 32;
    float v = row < rows ? x[row * 32 + threadIdx.x % 32] : 0.0f;
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, d);
    if (row < rows && threadIdx.x % 32 == 0)
        out[row] = v;
}
