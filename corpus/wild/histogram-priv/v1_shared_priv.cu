// kltrans: launch histo256 grid=min(ceil_div(n, THREADS), 2 * SM_COUNT) block=THREADS
// 256-bin byte histogram with a private copy per block: the block counts into a
// 256-entry histogram in shared memory (cheap atomics, contention only inside the
// block), walking the buffer with a grid-stride loop over a small grid (two blocks per
// SM of an H200), and only at the end adds its non-zero bins to the global histogram.
// histo must be zero on entry.

typedef unsigned char uchar;
typedef unsigned int uint;

#define THREADS 256
#define BINS 256
#define SM_COUNT 132

__global__ void histo256(const uchar *buffer, uint *histo, int size) {
  __shared__ uint block_hist[BINS];

  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    block_hist[b] = 0;
  __syncthreads();

  int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += stride)
    atomicAdd(&block_hist[buffer[i]], 1u);
  __syncthreads();

  for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
    uint count = block_hist[b];
    if (count > 0)
      atomicAdd(&histo[b], count);
  }
}
