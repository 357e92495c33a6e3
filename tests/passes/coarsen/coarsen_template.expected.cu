// RUN: kltrans opt -p 'coarsen{factor=8}'
// A templated element-wise add: eight elements per thread, the block size a template
// parameter of the launch header.
// kltrans: launch add grid=ceil_div(ceil_div(n, BLOCK), 8) block=BLOCK
template <typename T, int BLOCK>
__global__ void add(const T* a, const T* b, T* c, int n) {
  unsigned int idx = blockDim.x * 8 * blockIdx.x + threadIdx.x;
  for (int k = 0; k < 8; ++k) {
    unsigned int j = idx + k * blockDim.x;
    if (j < n) c[j] = a[j] + b[j];
  }
}
template __global__ void add<float, 256>(const float*, const float*, float*, int);
