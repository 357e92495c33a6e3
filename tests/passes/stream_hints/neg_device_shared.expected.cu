// RUN: kltrans opt -p 'stream-hints{arrays=p}' --assume 'no_alias(*)'
// CHECK-SKIP: global-pointer: p of pair_sum is `tile` at line 19: tile points into __shared__ memory
// The helper is called with a shared tile: its loads are not global-memory accesses.
// kltrans: launch pairs grid=ceil_div(n, 256) block=256
#define BLOCK 256

__device__ __forceinline__ float pair_sum(const float* p, int k)
{
    return p[k] + p[k ^ 1];
}

extern "C" __global__ void pairs(const float* x, float* y, int n)
{
    __shared__ float tile[BLOCK];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) {
        y[i] = pair_sum(tile, threadIdx.x);
    }
}
