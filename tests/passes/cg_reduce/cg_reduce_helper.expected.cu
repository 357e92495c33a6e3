// RUN: kltrans opt -p cg-reduce --assume reassoc
// GATE: corpus/reduce-sum
// ROUNDTRIP: model: shuffle-reduce writes each call back as an inline shfl_xor butterfly, not the helper
// A lane-sum helper called twice (the warps, then warp 0 over their partials): both calls
// become the library's reduction, the helper goes, the library's header comes in.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace coop = cooperative_groups;

// kltrans: launch reduce_sum grid=ceil_div(n, 256) block=256

extern "C" __global__ void reduce_sum(const float* x, float* out, int n)
{
    __shared__ float warp_totals[8];
    auto cta = coop::this_thread_block();
    auto w = coop::tiled_partition<32>(cta);
    const int g = threadIdx.x + blockIdx.x * blockDim.x;
    float acc = g < n ? x[g] : 0.0f;
    acc = coop::reduce(w, acc, coop::plus<float>());
    if (w.thread_rank() == 0) warp_totals[w.meta_group_rank()] = acc;
    cta.sync();
    if (w.meta_group_rank() == 0) {
        acc = w.thread_rank() < 8 ? warp_totals[w.thread_rank()] : 0.0f;
        acc = coop::reduce(w, acc, coop::plus<float>());
        if (w.thread_rank() == 0) atomicAdd(out, acc);
    }
}
