// RUN: kltrans opt -p 'flatten-block{fast=x}'
// Flattened with x fastest every warp keeps its threads, so the warp sum stays the same.
// kltrans: launch tile_sums grid=ceil_div(n, 64) block=32*2
__global__ void tile_sums(const float* x, float* out, int n)
{
    int i = blockIdx.x * 64 + threadIdx.x / 32 * 32 + threadIdx.x % 32;
    float v = i < n ? x[i] : 0.0f;
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 == 0)
        out[blockIdx.x * 2 + threadIdx.x / 32] = v;
}
