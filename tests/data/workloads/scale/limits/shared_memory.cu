// Over a device limit: 300,000 bytes of dynamic shared memory per block.
// expect: compile: more than sm_90 gives a block
// kltrans: launch scale grid=ceil_div(n, 256) block=256 smem=300000
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n) {
  extern __shared__ float s[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = a * s[threadIdx.x] + b;
}
