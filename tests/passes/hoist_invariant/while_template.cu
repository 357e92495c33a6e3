// RUN: kltrans opt -p 'hoist-invariant'
// A while loop of ITEMS (a macro: 4) iterations in a template kernel; out, in and gain are
// __restrict__, so the stores to out cannot change gain[blockIdx.y].
#define ITEMS 4
template <typename T>
__global__ void gain_rows(T* __restrict__ out, const T* __restrict__ in,
                          const T* __restrict__ gain, int n) {
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  int j = 0;
  while (j < ITEMS) {
    const int idx = (blockIdx.y * gridDim.x * blockDim.x + gid) * ITEMS + j;
    const T g = gain[blockIdx.y];
    if (idx < n) out[idx] = in[idx] * g;
    ++j;
  }
}
template __global__ void gain_rows<float>(float*, const float*, const float*, int);
