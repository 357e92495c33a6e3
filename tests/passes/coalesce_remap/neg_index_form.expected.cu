// RUN: kltrans opt -p 'coalesce-remap'
// CHECK-SKIP: index-form: is neither the chunk index
// Chunks of 4 taken two apart (tid * 8 + 2 * k): not a contiguous chunk tid * C + k,
// so the block-strided form would not cover the same elements.
// kltrans: launch even_scale grid=ceil_div(n, 256 * 8) block=256
extern "C" __global__ void even_scale(const float* __restrict__ x, float* __restrict__ y,
                                      float a, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 8 + 2 * k;
    if (i < n) y[i] = a * x[i];
  }
}
