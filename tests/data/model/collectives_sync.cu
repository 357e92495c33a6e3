// Synchronizations: each barrier of a kernel is marked after "sync:" with its scope (and
// "via NAME" where a helper or lambda holds it); "none" says why a call is not one.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

struct Gate { __device__ void sync() {} };

__device__ void stage_barrier() {
    __syncthreads();  // sync: block
}

__device__ void twice() {
    stage_barrier();  // sync: block via stage_barrier
    __syncwarp();  // sync: warp
}

__global__ void k(float* y) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    Gate gate;
    y[threadIdx.x] = 0.f;
    __syncthreads();  // sync: block
    block.sync();  // sync: block
    cg::sync(block);  // sync: block
    tile.sync();  // sync: tile
    __syncwarp(0xffffffffu);  // sync: warp
    gate.sync();  // sync: none: a struct's method, not a cooperative group
    auto flush = [&]() {
        y[threadIdx.x] += 1.f;
        block.sync();  // sync: block
    };
    flush();  // sync: block via flush
    twice();  // sync: block via twice; warp via twice
}
