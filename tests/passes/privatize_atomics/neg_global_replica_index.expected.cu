// RUN: kltrans opt -p 'global-atomics'
// CHECK-SKIP: replica-index: is not bin * 4 + threadIdx.x % 4
// Four copies picked by warp rather than by lane: not the replica layout the pass undoes.
// kltrans: launch hist_warp_copies grid=ceil_div(n, 256) block=256
extern "C" __global__ void hist_warp_copies(const unsigned char* data, unsigned int* hist, int n)
{
    __shared__ unsigned int s_bins[256 * 4];
    for (int k = threadIdx.x; k < 256 * 4; k += blockDim.x) {
        s_bins[k] = 0u;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&s_bins[data[i] * 4 + (threadIdx.x >> 5) % 4], 1u);
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        unsigned int total = 0u;
        for (int r = 0; r < 4; ++r) {
            total += s_bins[k * 4 + (r + k) % 4];
        }
        if (total) {
            atomicAdd(&hist[k], total);
        }
    }
}
