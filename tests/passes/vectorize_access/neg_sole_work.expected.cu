// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// CHECK-SKIP: sole-work: runs outside the guarded statement
// Every thread also bumps a per-thread counter slot outside the guard: with a quarter of
// the threads, a quarter of the slots would be bumped.
// kltrans: launch scale_count grid=ceil_div(n, 256) block=256
__global__ void scale_count(const float* x, float* y, int* visits, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  visits[blockIdx.x * blockDim.x + threadIdx.x] += 1;
  if (i < n) y[i] = 0.5f * x[i];
}
