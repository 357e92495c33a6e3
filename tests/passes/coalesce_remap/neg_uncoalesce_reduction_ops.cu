// RUN: kltrans opt -p 'uncoalesce-remap'
// CHECK-SKIP: reduction-ops: pass --assume reassoc
// Block-strided partial sums combined with atomicAdd: back to contiguous chunks the
// float partials change, so the total rounds differently.
// kltrans: launch total_sum grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void total_sum(const float* __restrict__ x, float* __restrict__ total,
                                     int n) {
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) {
    int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
    if (i < n) acc += x[i];
  }
  atomicAdd(total, acc);
}
