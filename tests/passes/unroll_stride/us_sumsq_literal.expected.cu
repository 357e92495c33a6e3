// RUN: kltrans opt -p 'unroll-stride{factor=2,var=k,braces=false}'
// A sum of squares in the style of a CUDA sample: unsigned long long index spelled
// threadIdx.x + blockIdx.x * blockDim.x, the stride written out, a literal factor and
// unbraced inner loops.
// kltrans: launch sumsq grid=min(ceil_div(n, 256), 132) block=256
__global__ void sumsq(const float *in, float *result, unsigned long long n) {
  unsigned long long idx = threadIdx.x + blockIdx.x * blockDim.x;
  float s = 0.0f;
  for (; idx + 1 * blockDim.x * gridDim.x < n; idx += 2 * blockDim.x * gridDim.x) {
    float val[2];
    for (int k = 0; k < 2; ++k)
      val[k] = in[idx + k * blockDim.x * gridDim.x];
    for (int k = 0; k < 2; ++k)
      s += val[k] * val[k];
  }
  for (; idx < n; idx += blockDim.x * gridDim.x) {
    float val = in[idx];
    s += val * val;
  }
  atomicAdd(result, s);
}
