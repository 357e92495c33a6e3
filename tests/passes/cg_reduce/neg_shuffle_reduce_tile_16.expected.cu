// RUN: kltrans opt -p shuffle-reduce --assume reassoc
// CHECK-SKIP: tile-of-32: width is 16
// A tile of 16 lanes: the written loop covers 32.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256
extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> half = cg::tiled_partition<16>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = cg::reduce(half, v, cg::plus<float>());
    if (half.thread_rank() == 0) atomicAdd(out, v);
}
