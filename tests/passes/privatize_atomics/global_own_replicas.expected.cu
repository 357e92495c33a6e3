// RUN: kltrans opt -p 'global-atomics'
// The shape privatize-atomics{replicas=8,bins=64} writes: 8 copies of 64 int bins, the
// update at bin * 8 + threadIdx.x % 8, a merge summing the copies. global-atomics gives
// the single global atomicAdd back.
// kltrans: launch low_bits grid=ceil_div(n, 256) block=256
extern "C" __global__ void low_bits(const int* x, int* counts, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        atomicAdd(&counts[x[tid] & 63], 1);
    }
}
