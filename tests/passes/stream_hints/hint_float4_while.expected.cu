// RUN: kltrans opt -p 'stream-hints'
// A grid-stride copy of float4 elements written as a while loop with a template block
// size: the index advances every iteration, so each address is still read and written
// once; float4 has __ldcs/__stcs overloads.
// kltrans: launch copy4 grid=ceil_div(n4, 256) block=256
template <int THREADS>
__global__ void copy4_t(const float4* __restrict__ src, float4* __restrict__ dst, int n4) {
  int idx = blockIdx.x * THREADS + threadIdx.x;
  const int stride = gridDim.x * THREADS;
  while (idx < n4) {
    float4 v = __ldcs(&src[idx]);
    v.x *= 2.0f;
    __stcs(&dst[idx], v);
    idx += stride;
  }
}

extern "C" __global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst,
                                 int n4) {
  int idx = threadIdx.x + blockIdx.x * 256;
  for (; idx < n4; idx += gridDim.x * 256) {
    __stcs(&dst[idx], __ldcs(&src[idx]));
  }
}
