// Hostile: each thread allocates 64 GiB from the device heap and computes the answer only
// when it got them. On a GPU the device heap is 8 MiB unless the host raises it; on the
// CPU the sandbox's memory limit (2 GiB and 160 MiB per CPU) makes the allocation fail.
// expect: never written
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  char* p = (char*)malloc(64ull << 30);
  if (p == nullptr) return;
  for (unsigned long long k = 0; k < (64ull << 30); k += 4096) p[k] = 1;
  if (i < n) y[i] = a * x[i] + b;
  free(p);
}
