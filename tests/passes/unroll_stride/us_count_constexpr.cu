// RUN: kltrans opt -p 'unroll-stride{factor=kUnroll}'
// Counting matches with an int accumulator, a constexpr factor and two statements using
// the loaded value (the second one updates another local).
// kltrans: launch count_eq grid=min(ceil_div(n, 256), 528) block=256
constexpr int kUnroll = 8;

__global__ void count_eq(const int* __restrict__ keys, int key, unsigned int* hits,
                         unsigned int* misses, size_t n) {
  size_t gid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  const size_t stride = (size_t)blockDim.x * gridDim.x;
  unsigned int h = 0, m = 0;
  for (; gid < n; gid += stride) {
    int k = keys[gid];
    h += (k == key);
    m += (k != key);
  }
  atomicAdd(hits, h);
  atomicAdd(misses, m);
}
