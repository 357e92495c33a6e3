// kltrans: launch sum_block grid=ceil_div(n, kBlockSize) block=kBlockSize
// Block-level tree with cooperative groups: the kernel talks to its thread block as a
// cg::thread_block (rank, size, group index, sync) instead of the raw built-ins. Each
// thread stages one element in shared memory, the block halves the live values each
// round (the upper half folded onto the lower half) with a block-wide sync between
// rounds, and thread 0 adds the block's total to *result: one atomicAdd per block.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

typedef float real;

constexpr int kBlockSize = 256;

__global__ void sum_block(const real* input, real* result, int n) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ real partial[kBlockSize];

  const unsigned int rank = block.thread_rank();
  const int idx = block.group_index().x * block.size() + rank;

  partial[rank] = idx < n ? input[idx] : real(0);
  cg::sync(block);

  for (unsigned int stride = block.size() / 2; stride > 0; stride /= 2) {
    if (rank < stride) {
      partial[rank] += partial[rank + stride];
    }
    block.sync();
  }

  if (rank == 0) {
    atomicAdd(result, partial[0]);
  }
}
