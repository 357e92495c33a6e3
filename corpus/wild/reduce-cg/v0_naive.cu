// kltrans: launch sum_naive grid=ceil_div(n, kBlockSize) block=kBlockSize
// Naive root: one thread per element. Each thread adds its own element to *result
// (zeroed by the caller) with a global atomicAdd; nothing is shared between threads.

typedef float real;

constexpr int kBlockSize = 256;

__global__ void sum_naive(const real* input, real* result, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) {
    atomicAdd(result, input[idx]);
  }
}
