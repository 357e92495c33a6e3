// RUN: kltrans opt -p 'coalesce-remap'
// GATE: tests/data/workloads/scale
// The scale workload with four contiguous elements per thread (a named `tid`): the
// warp's lanes start 4 elements apart. Remapped, lane t of the block handles
// t, t + 256, t + 512, t + 768 of the block's 1024 elements; the grid is unchanged.
// kltrans: launch scale grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i < n) y[i] = a * x[i] + b;
  }
}
