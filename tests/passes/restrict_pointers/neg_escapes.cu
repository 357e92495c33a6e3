// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// CHECK-SKIP: writes-known: escapes
// y is only read here, but it is also stored into a global pointer that anyone may write
// through later: whether y is read-only (and whether const is safe) cannot be decided.
__device__ float* g_last;
__global__ void scale(float* y, float* out, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) g_last = y;
  if (i < n) out[i] = a * y[i];
}
