// RUN: kltrans opt -p 'reroll-stride'
// The shape unroll-stride{factor=2,var=k,braces=false} writes for a sum of squares: the
// 2-way main loop (literal factor, unbraced inner loops) is removed.
// kltrans: launch sumsq grid=min(ceil_div(n, 256), 132) block=256
__global__ void sumsq(const float *in, float *result, unsigned long long n) {
  unsigned long long idx = threadIdx.x + blockIdx.x * blockDim.x;
  float s = 0.0f;
  for (; idx < n; idx += blockDim.x * gridDim.x) {
    float val = in[idx];
    s += val * val;
  }
  atomicAdd(result, s);
}
