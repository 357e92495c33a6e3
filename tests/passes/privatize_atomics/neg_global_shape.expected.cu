// RUN: kltrans opt -p 'global-atomics'
// CHECK-SKIP: privatized-shape: tile is not zeroed, counted and merged
// A shared tile for a transpose-like copy: no privatized counters here.
// kltrans: launch reverse_block grid=ceil_div(n, 256) block=256
extern "C" __global__ void reverse_block(const int* x, int* y, int n)
{
    __shared__ int tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    if (i < n) y[i] = tile[255 - threadIdx.x];
}
