// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// Read-only pointers already const only gain __restrict__.
__global__ void fma3(const float* a, const float* b, float* __restrict__ out, int n) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) out[tid] = a[tid] * b[tid] + out[tid];
}
