// Hostile: the kernel uses its input as scratch space and puts the values back before it
// ends, so the input compares bit-identical after the launch (the gate's check). On the
// CPU backend inputs are read-only during the launch: the first write faults. A GPU run
// sees the input unchanged and passes it.
// expect: wrote to an input
// expect-gpu: pass
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  x[i] = a * v + b;
  y[i] = x[i];
  x[i] = v;
}
