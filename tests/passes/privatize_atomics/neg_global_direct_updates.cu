// RUN: kltrans opt -p 'global-atomics'
// CHECK-SKIP: direct-updates: s_bins is used other than by atomicAdd
// The private bins are also read (a per-block saturation check): that read has no
// global counterpart.
// kltrans: launch hist_sat grid=ceil_div(n, 256) block=256
extern "C" __global__ void hist_sat(const unsigned char* data, unsigned int* hist, int n)
{
    __shared__ unsigned int s_bins[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        s_bins[k] = 0u;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && s_bins[data[i]] < 64u) atomicAdd(&s_bins[data[i]], 1u);
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        if (s_bins[k]) {
            atomicAdd(&hist[k], s_bins[k]);
        }
    }
}
