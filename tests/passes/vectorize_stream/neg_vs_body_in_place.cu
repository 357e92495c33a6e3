// RUN: kltrans opt -p 'vectorize-stream' --assume 'no_alias(*)'
// CHECK-SKIP: loads-first: the body stores to x, which it also reads (in place)
// An in-place update of x (x[i] read, then stored) with a second output: refused (the
// vector path would read x through a const float4 view and write it through another).
// kltrans: launch clamp_count grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void clamp_count(float* x, float* clipped, int n) {
  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x) {
    const float v = x[i];
    x[i] = fminf(fmaxf(v, -1.0f), 1.0f);
    clipped[i] = v;
  }
}
