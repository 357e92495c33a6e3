// RUN: kltrans opt -p 'grid-stride'
// A templated AXPY with 64-bit sizes: the size_t index is as wide as the bound, and the
// block size is a template parameter named in the launch header.
// kltrans: launch axpy grid=min(ceil_div(n, BLOCK), 1024) block=BLOCK
template <int BLOCK, typename T>
__global__ void axpy(T alpha, const T* __restrict__ x, T* __restrict__ y, size_t n) {
  for (size_t gid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; gid < n; gid += blockDim.x * gridDim.x) {
    y[gid] = alpha * x[gid] + y[gid];
  }
}
template __global__ void axpy<256, float>(float, const float*, float*, size_t);
