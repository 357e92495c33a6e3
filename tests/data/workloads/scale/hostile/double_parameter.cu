// Wrong, not malicious: the scale factor is a double where the workload passes a float32.
// The emulator converted the value to the parameter's type and passed it; a GPU gets the
// four bytes the gate packs and reads eight. The CPU backend checks the kernel's compiled
// parameter types against the workload's arguments.
// expect: is double, but the workload passes float32
// expect-gpu: y: 
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, double a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
