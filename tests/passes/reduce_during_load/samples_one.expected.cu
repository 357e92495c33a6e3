// RUN: kltrans opt -p 'reduce-during-load{factor=4}' --assume reassoc
// GATE: corpus/reduce-sum
// A local that stages one element, the thread's index read from the cooperative-groups
// block: four elements per thread are folded into the local, the grid is divided by four.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// kltrans: launch reduce_sum grid=ceil_div(n, 4 * 128) block=128
extern "C" __global__ void reduce_sum(const float *x, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ float partial[128];
  int gid = block.group_index().x * (block.group_dim().x * 4) + block.thread_index().x;
  float v = gid < n ? x[gid] : 0.0f;
  if (gid + block.group_dim().x < n) v += x[gid + block.group_dim().x];
  if (gid + 2 * block.group_dim().x < n) v += x[gid + 2 * block.group_dim().x];
  if (gid + 3 * block.group_dim().x < n) v += x[gid + 3 * block.group_dim().x];
  partial[block.thread_rank()] = v;
  block.sync();
  for (int s = 64; s > 0; s /= 2) {
    if (block.thread_rank() < s) partial[block.thread_rank()] += partial[block.thread_rank() + s];
    block.sync();
  }
  if (block.thread_rank() == 0) atomicAdd(out, partial[0]);
}
