// RUN: kltrans opt -p 'coarsen{factor=8}'
// A templated element-wise add: eight elements per thread, the block size a template
// parameter of the launch header.
// kltrans: launch add grid=ceil_div(n, BLOCK) block=BLOCK
template <typename T, int BLOCK>
__global__ void add(const T* a, const T* b, T* c, int n) {
  unsigned int idx = blockDim.x * blockIdx.x + threadIdx.x;
  if (idx < n) c[idx] = a[idx] + b[idx];
}
template __global__ void add<float, 256>(const float*, const float*, float*, int);
