// RUN: kltrans opt -p unroll-last-warp
// GATE: tests/data/workloads/blockmax256
// A max tree of 256 slots (one run of the workload per block), the thread's index from the cooperative-groups block and the
// barrier spelled block.sync(): the fold is kept as written (fmaxf) with warp 0's value
// in a register.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// kltrans: launch block_max grid=ceil_div(n, 256) block=256
extern "C" __global__ void block_max(const float* x, float* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    __shared__ float m[256];
    int g = blockIdx.x * 256 + threadIdx.x;
    m[block.thread_rank()] = g < n ? x[g] : -INFINITY;
    block.sync();
    for (int h = 128; h > 32; h >>= 1) {
        if (block.thread_rank() < h) {
            m[block.thread_rank()] = fmaxf(m[block.thread_rank()], m[block.thread_rank() + h]);
        }
        block.sync();
    }
    if (block.thread_rank() < 32) {
        float v = m[block.thread_rank()];
        v = fmaxf(v, m[block.thread_rank() + 32]);
        __syncwarp();
        m[block.thread_rank()] = v;
        __syncwarp();
        v = fmaxf(v, m[block.thread_rank() + 16]);
        __syncwarp();
        m[block.thread_rank()] = v;
        __syncwarp();
        v = fmaxf(v, m[block.thread_rank() + 8]);
        __syncwarp();
        m[block.thread_rank()] = v;
        __syncwarp();
        v = fmaxf(v, m[block.thread_rank() + 4]);
        __syncwarp();
        m[block.thread_rank()] = v;
        __syncwarp();
        v = fmaxf(v, m[block.thread_rank() + 2]);
        __syncwarp();
        m[block.thread_rank()] = v;
        __syncwarp();
        v = fmaxf(v, m[block.thread_rank() + 1]);
        __syncwarp();
        m[block.thread_rank()] = v;
    }
    if (block.thread_rank() == 0) out[blockIdx.x] = m[0];
}
