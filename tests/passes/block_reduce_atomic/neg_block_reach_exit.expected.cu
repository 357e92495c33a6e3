// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: block-reach: an earlier exit under
// The bounds check is an early return: threads past the end would never reach the
// block reduction's __syncthreads().
// kltrans: launch count_nonzero grid=ceil_div(n, 256) block=256
extern "C" __global__ void count_nonzero(const int* x, int* count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(count, x[i] != 0);
}
