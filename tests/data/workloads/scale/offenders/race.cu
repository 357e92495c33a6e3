// Planted offender: each element is computed by the partner thread in the other half of
// the block from shared memory, with the __syncthreads() between store and load missing
// (the upper half is slowed down so that the race shows).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  __shared__ float s[256];
  int t = threadIdx.x;
  int base = blockIdx.x * blockDim.x;
  if (t >= 128) for (int k = 0; k < 64; ++k) __nanosleep(200);
  s[t] = base + t < n ? x[base + t] : 0.0f;
  // missing: __syncthreads();
  int p = t ^ 128;
  if (base + p < n) y[base + p] = a * s[p] + b;
}
