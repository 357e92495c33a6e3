// cg_reduce.cu - reductions written with cooperative groups: a dot product with
// one atomic per warp, and a predicate count with a shared-memory block counter.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ float tile_sum(cg::thread_block_tile<32> tile, float v)
{
    #pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        v += tile.shfl_down(v, offset);
    }
    return v;   // meaningful in tile rank 0
}

__global__ void dot_cg(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ result, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);

    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        acc += a[i] * b[i];
    }
    acc = tile_sum(warp, acc);
    if (warp.thread_rank() == 0) atomicAdd(result, acc);
}

__global__ void __launch_bounds__(512)
count_above(const float* __restrict__ x, float thresh,
            unsigned long long* __restrict__ count, int n)
{
    __shared__ unsigned int block_count;
    auto block = cg::this_thread_block();
    auto tile = cg::tiled_partition<32>(block);

    if (block.thread_rank() == 0) block_count = 0;
    block.sync();

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int pred = (i < n && x[i] > thresh) ? 1 : 0;
    const int warp_count = cg::reduce(tile, pred, cg::plus<int>());
    if (tile.thread_rank() == 0) atomicAdd(&block_count, (unsigned int)warp_count);
    block.sync();

    if (block.thread_rank() == 0) atomicAdd(count, (unsigned long long)block_count);
}

void dot(const float* a, const float* b, float* d_result, int n, cudaStream_t stream)
{
    cudaMemsetAsync(d_result, 0, sizeof(float), stream);
    const int block = 256;
    int grid = (n + block - 1) / block;
    grid = grid > 1024 ? 1024 : grid;   // grid-stride loop handles the remainder
    dot_cg<<<grid, block, 0, stream>>>(a, b, d_result, n);
}

void count(const float* x, float thresh, unsigned long long* d_count, int n)
{
    cudaMemset(d_count, 0, sizeof(*d_count));
    count_above<<<(n + 511) / 512, 512>>>(x, thresh, d_count, n);
}
