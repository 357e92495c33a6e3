// RUN: kltrans opt -p 'uncoalesce-remap'
// CHECK-SKIP: no-barrier: warp primitive __shfl_xor_sync
// Neighbouring lanes swap values inside the loop: the exchange relies on lanes holding
// consecutive elements, which the inverse would break.
// kltrans: launch pair_swap grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void pair_swap(const float* __restrict__ x, float* __restrict__ y,
                                     int n) {
  for (int k = 0; k < 4; ++k) {
    int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    float other = __shfl_xor_sync(0xffffffff, v, 1);
    if (i < n) y[i] = other;
  }
}
