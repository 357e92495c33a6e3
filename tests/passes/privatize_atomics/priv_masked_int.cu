// RUN: kltrans opt -p 'privatize-atomics{bins=64}'
// Counting int values by their low six bits (`& 63`), int counters, bins given as an
// option.
// kltrans: launch low_bits grid=ceil_div(n, 256) block=256
extern "C" __global__ void low_bits(const int* x, int* counts, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        atomicAdd(&counts[x[tid] & 63], 1);
    }
}
