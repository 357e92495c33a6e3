// RUN: kltrans opt -p 'coalesce-remap'
// CHECK-SKIP: reduction-ops: pass --assume reassoc
// A per-thread float partial sum combined with atomicAdd: after the remap each
// partial holds other elements, so the float total rounds differently.
// kltrans: launch total_sum grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void total_sum(const float* __restrict__ x, float* __restrict__ total,
                                     int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i < n) acc += x[i];
  }
  atomicAdd(total, acc);
}
