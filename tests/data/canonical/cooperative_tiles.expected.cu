// Cooperative-groups calls on 32-thread tiles, in several spellings.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ float tile_sum(cg::thread_block_tile<32> g, float v) {
  for (int d = 16; d > 0; d >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, d);
  }
  return __shfl_sync(0xffffffffu, v, 0);
}

__global__ void block_sums(const float* x, float* y, int n) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cta);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  v = tile_sum(warp, v);
  float m = v;
  for (int d = 1; d < 32; d *= 2) {
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, d));
  }
  float run = v;
  for (int d = 1; d < 32; d <<= 1) {
    float up = __shfl_up_sync(0xffffffffu, run, d);
    if (warp.thread_rank() >= d) { run += up; }
  }
  __syncwarp();
  // ok: a 16-thread tile's shuffle keeps its width and mask
  auto half = cg::tiled_partition<16>(cta);
  float h = half.shfl_down(v, 8);
  // ok: a block barrier through cooperative groups compiles to barrier.sync, not bar.sync
  cta.sync();
  if (i < n) { y[i] = v + m + run + h; }
}
