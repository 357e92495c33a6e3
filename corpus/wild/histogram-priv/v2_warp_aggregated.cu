// kltrans: launch histo256 grid=min(ceil_div(n, THREADS), 2 * SM_COUNT) block=THREADS
// 256-bin byte histogram, block-private in shared memory, with warp-aggregated atomics:
// the lanes of a warp that read the same byte value find each other with
// __match_any_sync, and only the lowest of them adds the group's size (__popc of the
// match mask) to the shared bin. The grid-stride loop moves whole warps together so that
// all 32 lanes take part in every match; lanes past the end carry the key NO_BIN, which
// no byte can equal. histo must be zero on entry.

typedef unsigned char uchar;
typedef unsigned int uint;

#define THREADS 256
#define BINS 256
#define SM_COUNT 132
#define FULL_MASK 0xffffffffu
#define NO_BIN 0xffffffffu

__global__ void histo256(const uchar *buffer, uint *histo, int size) {
  __shared__ uint block_hist[BINS];

  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    block_hist[b] = 0;
  __syncthreads();

  int lane = threadIdx.x % warpSize;
  int stride = blockDim.x * gridDim.x;
  // first index of this thread's warp: the loop bound is the same for all 32 lanes
  for (int base = blockIdx.x * blockDim.x + threadIdx.x - lane; base < size; base += stride) {
    int i = base + lane;
    uint key = i < size ? (uint)buffer[i] : NO_BIN;
    uint peers = __match_any_sync(FULL_MASK, key);
    int leader = __ffs(peers) - 1;
    if (key != NO_BIN && lane == leader)
      atomicAdd(&block_hist[key], (uint)__popc(peers));
  }
  __syncthreads();

  for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
    uint count = block_hist[b];
    if (count > 0)
      atomicAdd(&histo[b], count);
  }
}
