// RUN: kltrans opt -p 'grid-stride{max_blocks=2048}'
// An in-place ReLU with a const `tid` written threadIdx.x first: the loop advances the
// index, so const is dropped in the loop header (one-per-thread{const=true} restores it).
// The header uses the file's CEIL_DIV spelling.
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// kltrans: launch relu_inplace grid=CEIL_DIV(n, 512) block=512
__global__ void relu_inplace(float* __restrict__ data, int n) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) {
    float v = data[tid];
    data[tid] = v > 0.0f ? v : 0.0f;
  }
}
