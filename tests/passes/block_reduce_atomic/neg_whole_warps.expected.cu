// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: whole-warps: is not a whole number of warps
// A block of 100 threads: its last warp is partial, and full-mask shuffles need all 32 lanes.
// kltrans: launch count_nonzero grid=ceil_div(n, 100) block=100
extern "C" __global__ void count_nonzero(const int* x, int* count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(count, x[i] != 0);
}
