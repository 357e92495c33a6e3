// RUN: kltrans opt -p 'unroll{factor=full}'
// The trip count is a template parameter: a compile-time constant, so full unrolling is safe.
template <typename T, int ITEMS>
__global__ void copy_items(const T* in, T* out, int n) {
  const int tid = threadIdx.x + blockDim.x * blockIdx.x;
  for (int j = 0; j < ITEMS; j++)
    if (tid * ITEMS + j < n) out[tid * ITEMS + j] = in[tid * ITEMS + j];
}
template __global__ void copy_items<float, 8>(const float*, float*, int);
