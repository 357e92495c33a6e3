// RUN: kltrans opt -p 'reduce-during-load{factor=8}'
// A templated integer checksum (xor): exact for any grouping, so no --assume is needed;
// eight elements per thread during the load.
// kltrans: launch checksum grid=ceil_div(n, 8 * BLOCK) block=BLOCK
template <int BLOCK>
__global__ void checksum(const unsigned int* __restrict__ words, unsigned int* out, int n) {
  __shared__ unsigned int acc[BLOCK];
  const int t = threadIdx.x;
  const int idx = blockIdx.x * (blockDim.x * 8) + t;
  unsigned int sum = (idx < n) ? words[idx] : 0u;
  if (idx + blockDim.x < n) sum ^= words[idx + blockDim.x];
  if (idx + 2 * blockDim.x < n) sum ^= words[idx + 2 * blockDim.x];
  if (idx + 3 * blockDim.x < n) sum ^= words[idx + 3 * blockDim.x];
  if (idx + 4 * blockDim.x < n) sum ^= words[idx + 4 * blockDim.x];
  if (idx + 5 * blockDim.x < n) sum ^= words[idx + 5 * blockDim.x];
  if (idx + 6 * blockDim.x < n) sum ^= words[idx + 6 * blockDim.x];
  if (idx + 7 * blockDim.x < n) sum ^= words[idx + 7 * blockDim.x];
  acc[t] = sum;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) acc[t] ^= acc[t + s];
    __syncthreads();
  }
  if (t == 0) atomicXor(out, acc[0]);
}
template __global__ void checksum<256>(const unsigned int* __restrict__, unsigned int*, int);
