// RUN: kltrans opt -p 'hoist-invariant'
// CHECK-SKIP: invariant: depends on p, assigned in the loop
// Pointer chasing: p changes every iteration, so x[p] and next[p] are not invariant.
__global__ void chase(const int* next, const float* x, float* out, int start) {
  int p = start + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < 8; ++k) {
    acc += x[p];
    p = next[p];
  }
  out[threadIdx.x] = acc;
}
