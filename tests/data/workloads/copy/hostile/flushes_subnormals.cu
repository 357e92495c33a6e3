// Hostile: an "exact" copy that flushes subnormals to zero (as a kernel built with
// fast math, or one that normalizes its values, would). Where outputs are compared bit
// for bit, the gate's float inputs hold subnormals and -0.0, so it fails.
// expect: not exact
// kltrans: launch copy_scalar grid=ceil_div(n, 256) block=256
extern "C" __global__ void copy_scalar(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fabsf(x[i]) < 1.17549435e-38f ? 0.0f : x[i];
}
