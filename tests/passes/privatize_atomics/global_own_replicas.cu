// RUN: kltrans opt -p 'global-atomics'
// The shape privatize-atomics{replicas=8,bins=64} writes: 8 copies of 64 int bins, the
// update at bin * 8 + threadIdx.x % 8, a merge summing the copies. global-atomics gives
// the single global atomicAdd back.
// kltrans: launch low_bits grid=ceil_div(n, 256) block=256
extern "C" __global__ void low_bits(const int* x, int* counts, int n)
{
    __shared__ int s_bins[64 * 8];
    for (int k = threadIdx.x; k < 64 * 8; k += blockDim.x) {
        s_bins[k] = 0;
    }
    __syncthreads();
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        atomicAdd(&s_bins[(x[tid] & 63) * 8 + threadIdx.x % 8], 1);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < 64; k += blockDim.x) {
        int total = 0;
        for (int r = 0; r < 8; ++r) {
            total += s_bins[k * 8 + (r + k) % 8];
        }
        if (total) {
            atomicAdd(&counts[k], total);
        }
    }
}
