// kltrans: launch histo256 grid=min(ceil_div(n, BYTES_PER_BLOCK), 8 * SM_COUNT) block=THREADS
// 256-bin byte histogram with one sub-histogram per warp: each warp of the block counts
// into its own 256 bins of shared memory (8 KB per block), so shared atomics only ever
// collide between lanes of one warp, and the warp-match of the previous version is gone.
// Every thread reads 16 bytes per trip as one uint4 (the buffer comes from cudaMalloc,
// so it is 16-byte aligned) and counts its four words byte by byte; the n % 16 bytes
// after the last whole uint4 are counted one per thread. The grid is sized for about
// BYTES_PER_BLOCK bytes per block and capped at one full wave (8 blocks of 256 per SM of
// an H200). At the end each block sums the warp copies of every bin and adds the
// non-zero totals to the global histogram. histo must be zero on entry.

typedef unsigned char uchar;
typedef unsigned int uint;

#define THREADS 256
#define BINS 256
#define SM_COUNT 132
#define WARPS_PER_BLOCK (THREADS / 32)
#define BYTES_PER_BLOCK 65536

__device__ __forceinline__ void count_word(uint *hist, uint word) {
  atomicAdd(&hist[word & 0xffu], 1u);
  atomicAdd(&hist[(word >> 8) & 0xffu], 1u);
  atomicAdd(&hist[(word >> 16) & 0xffu], 1u);
  atomicAdd(&hist[word >> 24], 1u);
}

__global__ void histo256(const uchar *buffer, uint *histo, int size) {
  __shared__ uint warp_hist[WARPS_PER_BLOCK * BINS];

  for (int j = threadIdx.x; j < WARPS_PER_BLOCK * BINS; j += blockDim.x)
    warp_hist[j] = 0;
  __syncthreads();

  uint *my_hist = warp_hist + (threadIdx.x / warpSize) * BINS;
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;

  int nvec = size / 16;
  const uint4 *chunks = reinterpret_cast<const uint4 *>(buffer);
  for (int i = gid; i < nvec; i += stride) {
    uint4 c = chunks[i];
    count_word(my_hist, c.x);
    count_word(my_hist, c.y);
    count_word(my_hist, c.z);
    count_word(my_hist, c.w);
  }

  // tail: the last size % 16 bytes, one per thread
  int t = nvec * 16 + gid;
  if (t < size)
    atomicAdd(&my_hist[buffer[t]], 1u);
  __syncthreads();

  for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
    uint count = 0;
    for (int w = 0; w < WARPS_PER_BLOCK; ++w)
      count += warp_hist[w * BINS + b];
    if (count > 0)
      atomicAdd(&histo[b], count);
  }
}
