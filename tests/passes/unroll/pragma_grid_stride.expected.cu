// RUN: kltrans opt -p 'unroll{factor=2}'
// A grid-stride loop with a runtime trip count: a partial unroll pragma needs no trip count
// (the compiler emits the remainder).
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
__global__ void relu(float* data, int n) {
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  #pragma unroll 2
  for (int i = gid; i < n; i += stride) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
}
