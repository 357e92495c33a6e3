// RUN: kltrans opt -p 'global-atomics'
// CHECK-SKIP: count-type: the private counters are unsigned long long and the global bins unsigned int
// 64-bit private counters merged into 32-bit global bins: counting globally in 32 bits
// is not the same program for the private part.
// kltrans: launch hist64 grid=ceil_div(n, 256) block=256
extern "C" __global__ void hist64(const unsigned char* data, unsigned int* hist, int n)
{
    __shared__ unsigned long long s_bins[256];
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        s_bins[k] = 0ull;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&s_bins[data[i]], 1ull);
    __syncthreads();
    for (int k = threadIdx.x; k < 256; k += blockDim.x) {
        if (s_bins[k]) {
            atomicAdd(&hist[k], s_bins[k]);
        }
    }
}
