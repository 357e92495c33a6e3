// RUN: kltrans opt -p 'reroll{var=t}'
// CHECK-SKIP: keeps-semantics: already used
// The requested loop variable t is already a name in the kernel: re-rolling would shadow it.
__global__ void pairs(const float* x, float* y) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  y[2 * t + 0] = x[2 * t + 0];
  y[2 * t + 1] = x[2 * t + 1];
}
