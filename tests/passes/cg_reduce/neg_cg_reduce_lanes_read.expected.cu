// RUN: kltrans opt -p cg-reduce --assume reassoc
// CHECK-SKIP: same-results
// Every lane stores its value after a shfl_down loop: lanes other than 0 hold partial
// sums, which the library would turn into the total. The block machine sees the stores
// differ.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// kltrans: launch partial_sums grid=ceil_div(n, 256) block=256
extern "C" __global__ void partial_sums(const float* x, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    if (i < n) out[i] = v;
}
