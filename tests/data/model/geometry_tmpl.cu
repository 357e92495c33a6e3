// Thread geometry with the block size as a template parameter, a constexpr or a macro:
// such a size is the block's only where the launch contract sets the block to it.
// Marks as in geometry_builtin.cu.
#include <cooperative_groups.h>
using namespace cooperative_groups;

constexpr int kThreads = 128;
#define WARPS 4
#define TILE_W 16

// kltrans: launch scale_tmpl grid=ceil_div(n, BLOCK) block=BLOCK
template <int BLOCK>
__global__ void scale_tmpl(float* data, int n)
{
    const int idx = blockIdx.x * BLOCK + threadIdx.x;  // role: global x
    const int per = BLOCK;  // role: block-size x
    const int span = gridDim.x * BLOCK;  // role: grid-size x
    const int halfblk = BLOCK / 2;  // role: block-size x div 2
    const int dbl = blockIdx.x * (2 * BLOCK) + threadIdx.x;  // role: none: two elements per thread
    if (idx < n)
        data[idx] *= per + span + halfblk + dbl;
}

// kltrans: launch scale_const grid=ceil_div(n, kThreads) block=kThreads
__global__ void scale_const(float* data, int n)
{
    const int idx = threadIdx.x + kThreads * blockIdx.x;  // role: global x
    const int idx_lit = blockIdx.x * 128 + threadIdx.x;  // role: global x
    const int gidx = (blockIdx.x * blockDim.x + threadIdx.x) & 31;  // role: lane x 32 mod 32
    const int wrow = blockIdx.x * WARPS + threadIdx.x / 32;  // role: global x 32 div 32
    const int wrow2 = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;  // role: global x 32 div 32
    if (idx < n && idx_lit == idx)
        data[idx] += gidx + wrow + wrow2;
}

template <int BLOCK>
__global__ void scale_no_contract(float* data, int n)
{
    const int idx = blockIdx.x * BLOCK + threadIdx.x;  // role: none: no contract says block=BLOCK
    const int idx2 = blockIdx.x * 256 + threadIdx.x;  // role: none: 256 is not known to be the block
    if (idx < n)
        data[idx] += idx2;
}

// kltrans: launch tiles_2d grid=(ceil_div(cols, TILE_W), ceil_div(rows, TILE_W)) block=(TILE_W, TILE_W)
__global__ void tiles_2d(const float* in, float* out, int rows, int cols)
{
    const int x = blockIdx.x * TILE_W + threadIdx.x;  // role: global x
    const int y = blockIdx.y * TILE_W + threadIdx.y;  // role: global y
    const int flat = threadIdx.y * TILE_W + threadIdx.x;  // role: thread linear
    const int ln = threadIdx.x % 32;  // role: thread x mod 32
    const int all = blockIdx.x * (TILE_W * TILE_W) + flat;  // role: global linear
    const int part = blockIdx.x * TILE_W + flat;  // role: none: scaled by one side of the block
    if (x < cols && y < rows)
        out[y * cols + x] = in[x * rows + y] + flat + ln + all + part;
}

// kltrans: launch rows_by_split grid=ceil_div(rows, TILE_W) block=TILE_W*TILE_W
__global__ void rows_by_split(const float* a, float* b, int rows, int cols)
{
    const int ty = threadIdx.x / TILE_W;  // role: thread x div 16
    const int tx = threadIdx.x % TILE_W;  // role: thread x mod 16
    const int grow = blockIdx.x * TILE_W + threadIdx.x / TILE_W;  // role: global x div 16
    const int gcol = blockIdx.y * TILE_W + threadIdx.x % TILE_W;  // role: global y mod 16
    if (grow < rows && gcol < cols)
        b[grow * cols + gcol] = a[grow * cols + gcol] + ty + tx;
}

__global__ void bare_cg(float* data, int n)
{
    thread_block blk = this_thread_block();
    thread_block_tile<16> t16 = tiled_partition<16>(blk);
    grid_group all = this_grid();
    const unsigned rank = blk.thread_rank();  // role: thread linear
    const unsigned l16 = t16.thread_rank();  // role: lane linear 16
    const unsigned m16 = t16.meta_group_rank();  // role: warp linear 16
    const unsigned everyone = all.thread_rank();  // role: global linear
    if (everyone < (unsigned)n)
        data[everyone] = rank + l16 + m16;
}
