// RUN: kltrans opt -p 'vectorize-access{tail=assume}' --assume 'aligned(*,16)'
// CHECK-SKIP: remainder: tail=assume needs n % 4 == 0
// tail=assume drops the scalar tail, which is only right when n % 4 == 0; nothing says
// so here (the gate's planted offender divisible_by_4.cu is this bug).
// kltrans: launch copy grid=ceil_div(n, 256) block=256
__global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
