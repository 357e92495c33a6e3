// RUN: kltrans opt -p 'vectorize-access{width=2}' --assume 'aligned(x,8)' --assume 'aligned(y,8)'
// SAXPY reads y before it writes it: y's vector is loaded (not const) and stored back.
// float2 accesses need 8-byte alignment, stated per pointer. The index is written
// threadIdx.x first; the header uses the file's CEIL_DIV.
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
// kltrans: launch saxpy grid=CEIL_DIV(CEIL_DIV(n, 2), 256) block=256
__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int tid = threadIdx.x + blockDim.x * blockIdx.x;
  if (2 * tid + 1 < n) {
    float2 y2 = reinterpret_cast<const float2*>(y)[tid];
    const float2 x2 = reinterpret_cast<const float2*>(x)[tid];
    y2.x = a * x2.x + y2.x;
    y2.y = a * x2.y + y2.y;
    reinterpret_cast<float2*>(y)[tid] = y2;
  } else {
    for (int k = 2 * tid; k < n; ++k) y[k] = a * x[k] + y[k];
  }
}
