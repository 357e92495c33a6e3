// RUN: kltrans opt -p 'vectorize-access{width=2}' --assume 'aligned(x,8)' --assume 'aligned(y,8)'
// SAXPY reads y before it writes it: y's vector is loaded (not const) and stored back.
// float2 accesses need 8-byte alignment, stated per pointer. The index is written
// threadIdx.x first; the header uses the file's CEIL_DIV.
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// kltrans: launch saxpy grid=CEIL_DIV(n, 256) block=256
__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (tid < n) y[tid] = a * x[tid] + y[tid];
}
