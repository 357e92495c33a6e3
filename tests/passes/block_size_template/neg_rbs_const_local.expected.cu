// RUN: kltrans opt -p 'runtime-block-size'
// CHECK-SKIP: value-reads: an array size
// A const local made from the parameter sizes the per-warp slots: it would stop being a
// constant.
// kltrans: launch warp_totals<256> grid=ceil_div(n, 256) block=256
template <unsigned int BLOCK>
__global__ void warp_totals(const float* x, float* out, int n)
{
    const unsigned int warps = BLOCK / 32;
    __shared__ float slot[warps];
    unsigned int i = blockIdx.x * BLOCK + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int d = 16; d > 0; d /= 2)
        v += __shfl_down_sync(0xffffffffu, v, d);
    if (threadIdx.x % 32 == 0)
        slot[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < warps)
        out[blockIdx.x * warps + threadIdx.x] = slot[threadIdx.x];
}
