// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(words,16)'
// In-place XOR of 32-bit words with a key (a compound assignment): one uint4 load and
// one uint4 store per thread.
// kltrans: launch xor_key grid=ceil_div(n, 512) block=512
__global__ void xor_key(unsigned int* words, unsigned int key, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) words[i] ^= key;
}
