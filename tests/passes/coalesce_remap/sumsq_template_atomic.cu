// RUN: kltrans opt -p 'coalesce-remap' --assume reassoc
// A templated kernel (chunk size C a template parameter, index `gid`): squares its
// chunk into y and adds each thread's partial sum of squares to one global total with
// atomicAdd. The partials now cover other elements, so the float total is
// reassociated (--assume reassoc); the set of elements summed is the same.
// kltrans: launch square_sum grid=ceil_div(n, 128 * C) block=128
template <int C>
__global__ void square_sum(const float* __restrict__ x, float* __restrict__ y,
                           float* __restrict__ total, int n) {
  const int gid = threadIdx.x + blockDim.x * blockIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < C; ++k) {
    int i = gid * C + k;
    if (i < n) {
      float v = x[i] * x[i];
      y[i] = v;
      acc += v;
    }
  }
  atomicAdd(total, acc);
}

template __global__ void square_sum<4>(const float* __restrict__, float* __restrict__,
                                       float* __restrict__, int);
