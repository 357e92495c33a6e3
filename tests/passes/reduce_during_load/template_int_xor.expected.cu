// RUN: kltrans opt -p 'reduce-during-load{factor=8}'
// A templated integer checksum (xor): exact for any grouping, so no --assume is needed;
// eight elements per thread during the load.
// kltrans: launch checksum grid=ceil_div(ceil_div(n, BLOCK), 8) block=BLOCK
template <int BLOCK>
__global__ void checksum(const unsigned int* __restrict__ words, unsigned int* out, int n) {
  __shared__ unsigned int acc[BLOCK];
  const int t = threadIdx.x;
  const int idx = blockIdx.x * (blockDim.x * 8) + t;
  acc[t] = ((idx < n) ? words[idx] : 0u)
      ^ (idx + blockDim.x < n ? words[idx + blockDim.x] : 0u)
      ^ (idx + 2 * blockDim.x < n ? words[idx + 2 * blockDim.x] : 0u)
      ^ (idx + 3 * blockDim.x < n ? words[idx + 3 * blockDim.x] : 0u)
      ^ (idx + 4 * blockDim.x < n ? words[idx + 4 * blockDim.x] : 0u)
      ^ (idx + 5 * blockDim.x < n ? words[idx + 5 * blockDim.x] : 0u)
      ^ (idx + 6 * blockDim.x < n ? words[idx + 6 * blockDim.x] : 0u)
      ^ (idx + 7 * blockDim.x < n ? words[idx + 7 * blockDim.x] : 0u);
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) acc[t] ^= acc[t + s];
    __syncthreads();
  }
  if (t == 0) atomicXor(out, acc[0]);
}
template __global__ void checksum<256>(const unsigned int* __restrict__, unsigned int*, int);
