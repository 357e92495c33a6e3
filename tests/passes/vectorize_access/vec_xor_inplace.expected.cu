// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(words,16)'
// In-place XOR of 32-bit words with a key (a compound assignment): one uint4 load and
// one uint4 store per thread.
// kltrans: launch xor_key grid=ceil_div(ceil_div(n, 4), 512) block=512
__global__ void xor_key(unsigned int* words, unsigned int key, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * i + 3 < n) {
    uint4 words4 = reinterpret_cast<const uint4*>(words)[i];
    words4.x ^= key;
    words4.y ^= key;
    words4.z ^= key;
    words4.w ^= key;
    reinterpret_cast<uint4*>(words)[i] = words4;
  } else {
    for (int k = 4 * i; k < n; ++k) words[k] ^= key;
  }
}
