// RUN: kltrans opt -p 'fast-math{ops=exp}' --assume 'tolerance(1e-5)'
// CHECK-SKIP: tolerance: covers __expf's 2 + floor(1.173|x|) ulp only for |x| <= 69.8
// A tolerance of 1e-5 covers __expf only while |x| <= 69.8, and nothing bounds x here
// (--assume 'exp_range(B)' would).
__global__ void exp_all(const float* x, float* y, int n) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) y[tid] = expf(x[tid]);
}
