// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: smem-budget: exceed the 48 KiB static limit
// The kernel already stages 48 KiB in shared memory: 32 more partials do not fit.
#define TILE 12288
// kltrans: launch staged_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void staged_sum(const int* x, int* out, int n)
{
    __shared__ int tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = threadIdx.x; k < TILE; k += blockDim.x) tile[k] = k;
    __syncthreads();
    int v = i < n ? x[i] + tile[threadIdx.x] : 0;
    atomicAdd(out, v);
}
