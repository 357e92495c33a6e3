// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: element-wise: calls atomicAdd
// The body counts positive elements with an atomic: a cross-thread dependence, not an
// element-wise body.
// kltrans: launch relu_count grid=ceil_div(n, 256) block=256
__global__ void relu_count(const float* x, float* y, int* positives, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    if (v > 0.0f) atomicAdd(positives, 1);
    y[i] = v > 0.0f ? v : 0.0f;
  }
}
