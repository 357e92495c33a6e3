// RUN: kltrans opt -p 'global-columns'
// CHECK-SKIP: column-shape: the kernel is too short to be a column-privatized histogram
// A shared staging tile, not lane-column counters.
// kltrans: launch reverse_block grid=ceil_div(n, 256) block=256
extern "C" __global__ void reverse_block(const int* x, int* y, int n)
{
    __shared__ int tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    if (i < n) y[i] = tile[255 - threadIdx.x];
}
