// RUN: kltrans opt -p 'coarsen{factor=2}'
// A tanh-approximation GELU with the index written threadIdx.x first and a multi-line
// body; the launch header uses the file's CEIL_DIV spelling.
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// kltrans: launch gelu grid=CEIL_DIV(n, 128) block=128
__global__ void gelu(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) {
    const float v = in[tid];
    const float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
    out[tid] = 0.5f * v * (1.0f + tanhf(inner));
  }
}
