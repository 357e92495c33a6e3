// RUN: kltrans opt -p 'unroll-stride'
// CHECK-SKIP: stride-loop: declaring the loop's i before the loop would clash
// Two grid-stride folds that both declare i in their headers: hoisting either
// declaration out of its loop would clash with the other loop's i.
// kltrans: launch dot_norm grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void dot_norm(const float* x, const float* y, float* out, int n) {
  float sx = 0.0f, sy = 0.0f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    sx += x[i];
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    sy += y[i];
  atomicAdd(&out[0], sx);
  atomicAdd(&out[1], sy);
}
