// RUN: kltrans opt -p 'privatize-atomics'
// CHECK-SKIP: no-early-exit: threads that leave early never reach
// The bounds check returns early: those threads would skip the merge's __syncthreads().
// kltrans: launch hist_ret grid=ceil_div(n, 256) block=256
extern "C" __global__ void hist_ret(const unsigned char* data, unsigned int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&hist[data[i]], 1u);
}
