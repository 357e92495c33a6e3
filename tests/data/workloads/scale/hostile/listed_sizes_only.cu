// Hostile: right only at the workload's published test sizes (n = 1, 1000, 100003) and
// wrong everywhere else. Each gate run also checks sizes drawn from a secret seed, one of
// them above the largest listed size, so it fails there.
// expect: a size drawn for this run
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool listed = n == 1 || n == 1000 || n == 100003;
  if (i < n) y[i] = listed ? a * x[i] + b : 0.0f;
}
