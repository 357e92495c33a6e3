// RUN: kltrans opt -p 'vectorize-stream'
// CHECK-SKIP: map-loop: `sum += v` assigns something other than a local of the body
// A running sum declared outside the body carries a value from one iteration to the next:
// not an element-wise map.
// kltrans: launch relu_sum grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void relu_sum(const float* x, float* y, float* total, int n) {
  float sum = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    const float v = fmaxf(x[i], 0.0f);
    sum += v;
    y[i] = v;
  }
  atomicAdd(total, sum);
}
