// Planted offender: remembers the output pointer and skips the work when called again
// with the same buffers (output caching by pointer).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
__device__ float* g_last_y;
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  if (*(float* volatile*)&g_last_y == y) return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
  __syncthreads();
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) g_last_y = y;
}
