// RUN: kltrans opt -p 'block-reduce-atomic'
// CHECK-SKIP: uniform-address: depends on threadIdx.x
// Four partial counters picked by the thread: the block does not update one word.
// kltrans: launch spread_count grid=ceil_div(n, 256) block=256
extern "C" __global__ void spread_count(const int* x, int* counts, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[threadIdx.x % 4], x[i]);
}
