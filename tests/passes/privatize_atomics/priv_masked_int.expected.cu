// RUN: kltrans opt -p 'privatize-atomics{bins=64}'
// Counting int values by their low six bits (`& 63`), int counters, bins given as an
// option.
// kltrans: launch low_bits grid=ceil_div(n, 256) block=256
extern "C" __global__ void low_bits(const int* x, int* counts, int n)
{
    __shared__ int s_bins[64];
    for (int k = threadIdx.x; k < 64; k += blockDim.x) {
        s_bins[k] = 0;
    }
    __syncthreads();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        atomicAdd(&s_bins[x[tid] & 63], 1);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 64; k += blockDim.x) {
        if (s_bins[k]) {
            atomicAdd(&counts[k], s_bins[k]);
        }
    }
}
