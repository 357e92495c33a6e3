// RUN: kltrans opt -p 'warp-aggregate-atomics' --arch sm_90
// A grid-stride histogram with a macro bin count, the address spelled bins + key and a
// weight that is a kernel scalar (the same in every lane), plus a per-block histogram in a
// template kernel indexed by blockIdx.x * NB + k.
#define NBINS 64
// kltrans: launch weighted_hist grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void weighted_hist(const int* __restrict__ data,
                                         unsigned long long* __restrict__ bins,
                                         unsigned long long w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  while (i < n) {
    atomicAdd(bins + (data[i] & (NBINS - 1)), w);
    i += gridDim.x * blockDim.x;
  }
}

// kltrans: launch block_hist grid=min(ceil_div(n, 256), 64) block=256
template <int NB>
__global__ void block_hist(const unsigned char* __restrict__ data, unsigned int* hist, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int k = data[i] % NB;
    atomicAdd(&hist[blockIdx.x * NB + k], 1u);
  }
}
template __global__ void block_hist<16>(const unsigned char*, unsigned int*, int);
