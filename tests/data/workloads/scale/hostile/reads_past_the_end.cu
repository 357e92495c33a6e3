// Wrong, not malicious: every thread also reads 16 KiB past its element, beyond the
// input's 4 KiB guard zone, and multiplies it by zero. On a GPU such a read usually lands
// in mapped memory and goes unseen; on the CPU each buffer ends against a page that cannot
// be touched, so the read faults, with its line.
// expect: invalid memory access
// expect-gpu: pass
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b + 0.0f * x[i + 4096];
}
