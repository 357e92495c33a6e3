// Wrong, not malicious: every thread also reads 16 KiB past its element, beyond the
// input's 4 KiB guard zone, and lets the value change nothing (unless it is exactly
// 12345.5). On a GPU such a read usually lands in mapped memory and goes unseen; on the
// CPU each buffer ends against address space that cannot be touched, so the read faults,
// with its line.
// expect: invalid memory access
// expect-gpu: pass
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b + (x[i + 4096] == 12345.5f ? 1.0f : 0.0f);
}
