// RUN: kltrans opt -p 'fast-math{ops=fma}' --assume 'tolerance(1e-5)'
// Horner steps written c + x * r: each becomes fmaf(x, r, c); precise-math{order=add-mul}
// writes them back in the same order.
__device__ float poly3(float x, const float* c) {
  float r = c[3];
  r = c[2] + x * r;
  r = c[1] + x * r;
  return c[0] + x * r;
}

__global__ void eval_poly(const float* __restrict__ xs, const float* __restrict__ coef,
                          float* __restrict__ ys, int n) {
  const int tid = threadIdx.x + blockIdx.x * blockDim.x;
  if (tid < n) ys[tid] = poly3(xs[tid], coef);
}
