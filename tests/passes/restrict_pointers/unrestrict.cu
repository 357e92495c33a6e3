// RUN: kltrans opt -p 'unrestrict-pointers' --assume 'no_alias(*)'
// __restrict__ goes away; const stays (const=false, the default). The assumption is the
// fact under which the original was valid; the round trip (restrict-pointers) needs it.
__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
