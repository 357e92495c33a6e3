// RUN: kltrans opt -p 'coarsen{factor=2,counter=a}'
// CHECK-SKIP: fresh-names: name a is already used
// The requested loop counter name `a` is a parameter of the kernel.
// kltrans: launch axpb grid=ceil_div(n, 256) block=256
__global__ void axpb(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
