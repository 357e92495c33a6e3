// Hostile: writes past the end of its output, but only the byte the gate used to fill
// its guard zones with (0x5A), so the guard check saw nothing. The guard byte is drawn
// per run now.
// expect: out-of-bounds write after buffer y
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
  if (i < 64) reinterpret_cast<unsigned char*>(y + n)[i] = 0x5A;
}
