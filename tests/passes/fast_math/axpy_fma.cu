// RUN: kltrans opt -p 'fast-math{ops=fma}' --assume 'tolerance(1e-6)'
// alpha * x[i] + y[i] becomes fmaf(alpha, x[i], y[i]) in a grid-stride loop; the integer
// index arithmetic is not a site.
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
__global__ void saxpy_grid(int n, float alpha, const float* x, float* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = alpha * x[i] + y[i];
  }
}

void launch_saxpy(int n, float alpha, const float* x, float* y) {
  saxpy_grid<<<CEIL_DIV(n, 256), 256>>>(n, alpha, x, y);
}
