// RUN: kltrans opt -p 'uncoalesce-remap{tid=inline}'
// ROUNDTRIP: none: the strided index is spelled base + j * blockDim.x; coalesce-remap writes its own spelling
// A hand-written block-strided copy (elements per thread a template parameter, the
// block base in its own variable): every thread gets a contiguous chunk again.
// kltrans: launch copy4 grid=ceil_div(n, 128 * ITEMS) block=128
template <int ITEMS>
__global__ void copy4(const int* __restrict__ src, int* __restrict__ dst, int n) {
  const int base = blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
  for (int j = 0; j < ITEMS; ++j) {
    const int e = base + j * blockDim.x;
    if (e < n) dst[e] = src[e];
  }
}

template __global__ void copy4<4>(const int* __restrict__, int* __restrict__, int);
