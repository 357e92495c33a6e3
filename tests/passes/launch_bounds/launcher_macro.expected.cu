// RUN: kltrans opt -p 'add-launch-bounds{min_blocks=2}'
// The host launcher uses BLOCK_SIZE threads: the bound is written by name, and two
// resident blocks of 512 threads fit every SM from sm_70 to sm_90.
#define BLOCK_SIZE 512
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void __launch_bounds__(BLOCK_SIZE, 2) relu_kernel(const float* in, float* out, int n) {
  const int idx = threadIdx.x + blockDim.x * blockIdx.x;
  if (idx < n) {
    float v = in[idx];
    out[idx] = v > 0.0f ? v : 0.0f;
  }
}

void relu(const float* in, float* out, int n) {
  relu_kernel<<<CEIL_DIV(n, BLOCK_SIZE), BLOCK_SIZE>>>(in, out, n);
}
