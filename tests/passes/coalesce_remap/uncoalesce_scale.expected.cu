// RUN: kltrans opt -p 'uncoalesce-remap'
// GATE: tests/data/workloads/scale
// The output shape of coalesce-remap on the scale kernel: back to a contiguous chunk
// per thread, written with the kernel's own global index `tid`.
// kltrans: launch scale grid=ceil_div(n, 256 * 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; ++k) {
    int i = tid * 4 + k;
    if (i < n) y[i] = a * x[i] + b;
  }
}
