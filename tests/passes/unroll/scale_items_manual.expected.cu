// RUN: kltrans opt -p 'unroll{factor=full,style=manual}'
// GATE: tests/data/workloads/scale
// Thread-coarsened scale: each thread handles 4 consecutive elements in a constant-trip
// loop, which is copied out by hand (k replaced by 0..3; each copy keeps its own braces,
// so the local i is declared once per copy). The ragged tail is guarded per element.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  const int base = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  {
    const int i = base + 0;
    if (i < n) y[i] = a * x[i] + b;
  }
  {
    const int i = base + 1;
    if (i < n) y[i] = a * x[i] + b;
  }
  {
    const int i = base + 2;
    if (i < n) y[i] = a * x[i] + b;
  }
  {
    const int i = base + 3;
    if (i < n) y[i] = a * x[i] + b;
  }
}
