// Strided loops over the launch, in several authors' spellings. Each loop's first line is
// marked "loop:" with the kind the model must give it (and trips=N, adv=NAME:AMOUNT;...
// when those are known); a loop that must not get a stride kind says why in a comment.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define THREADS 256
#define WARP 32

__global__ void fill_grid(float* out, float v, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)  // loop: grid-stride
        out[i] = v;
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += gridDim.x * blockDim.x)  // loop: grid-stride
        out[i] += v;
    const int first = blockIdx.x * blockDim.x + threadIdx.x;
    const int step = gridDim.x * blockDim.x;
    for (int i = first; i < n; i = i + step)  // loop: grid-stride
        out[i] *= v;
    for (size_t i = first; i < (size_t)n; i = step + i)  // loop: grid-stride
        out[i] -= v;
    int k = first;
    while (k < n) {  // loop: grid-stride
        out[k] = out[k] * 2.0f;
        k += step;
    }
    int m = first;
    if (m < n) {
        do {  // loop: grid-stride
            out[m] += 1.0f;
            m += step;
        } while (m < n);
    }
    for (int i = first; i < n;) {  // loop: grid-stride
        out[i] = -out[i];
        i += step;
    }
    for (int i = first; i < n; i += 2 * step)  // loop: counted (two grids per step)
        out[i] = 0.0f;
    for (int i = first + 1; i < n; i += step)  // loop: counted (not the thread's own index)
        out[i] = 1.0f;
}

__global__ void fill_cg(double* out, int n)
{
    cg::grid_group grid = cg::this_grid();
    cg::thread_block block = cg::this_thread_block();
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())  // loop: grid-stride
        out[i] = 0.0;
    for (auto i = cg::this_grid().thread_rank(); i < n; i += cg::this_grid().num_threads())  // loop: grid-stride
        out[i] += 1.0;
    for (unsigned i = block.group_index().x * block.size() + block.thread_rank(); i < n;  // loop: grid-stride
         i += gridDim.x * block.size())
        out[i] *= 2.0;
    for (unsigned c = block.thread_rank(); c < 64; c += block.size())  // loop: block-stride
        out[c] = 3.0;
    for (unsigned c = block.thread_rank(); c < 64; c += block.num_threads())  // loop: block-stride
        out[c] = 4.0;
}

__global__ void row_block(const float* in, float* out, int cols)
{
    const float* row = in + (size_t)blockIdx.x * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)  // loop: block-stride
        acc += row[c];
    const int t = threadIdx.x;
    int c2 = t;
    while (c2 < cols) {  // loop: block-stride
        out[(size_t)blockIdx.x * cols + c2] = row[c2] / acc;
        c2 = c2 + blockDim.x;
    }
    for (int c = threadIdx.x; c < cols; c += THREADS)  // loop: counted (no launch contract: THREADS is not known to be the block)
        out[c] += 1.0f;
}

// kltrans: launch row_tmpl grid=rows block=NT
template <int NT>
__global__ void row_tmpl(const float* in, float* out, int cols)
{
    for (int c = threadIdx.x; c < cols; c += NT)  // loop: block-stride
        out[blockIdx.x * cols + c] = in[blockIdx.x * cols + c];
}

// kltrans: launch row_fixed grid=rows block=THREADS
__global__ void row_fixed(const float* in, float* out, int cols)
{
    for (int c = threadIdx.x; c < cols; c += THREADS)  // loop: block-stride
        out[blockIdx.x * cols + c] = in[blockIdx.x * cols + c];
    for (int c = threadIdx.x; c < cols; c += 256)  // loop: block-stride
        out[blockIdx.x * cols + c] *= 2.0f;
    for (int c = threadIdx.x; c < cols; c += 128)  // loop: counted (half the block)
        out[blockIdx.x * cols + c] += 1.0f;
}

__global__ void row_warp(const float* in, float* out, int rows, int cols)
{
    const int lane = threadIdx.x & (WARP - 1);
    const int r = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int c = lane; c < cols; c += WARP)  // loop: warp-stride
        s += in[r * cols + c];
    for (int c = threadIdx.x % warpSize; c < cols; c += warpSize)  // loop: warp-stride
        out[r * cols + c] = in[r * cols + c] - s;
    for (int c = lane; c < cols; c += 16)  // loop: counted (half a warp)
        out[r * cols + c] += 1.0f;
}

__global__ void row_tile(const float* in, float* out, int cols)
{
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    for (int c = tile.thread_rank(); c < cols; c += tile.size())  // loop: warp-stride
        out[c] = in[c];
    for (int c = tile.thread_rank(); c < cols; c += 16)  // loop: warp-stride
        out[c] += in[c];
    for (int c = tile.thread_rank(); c < cols; c += 32)  // loop: counted (a tile of 16 stepping by 32)
        out[c] *= in[c];
}

// kltrans: launch rows_capped grid=min(rows, 1024) block=256
__global__ void rows_capped(const float* in, float* out, int rows, int cols)
{
    in += (size_t)blockIdx.x * cols;
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {  // loop: block-grid-stride adv=in:gridDim.x*cols
        for (int c = threadIdx.x; c < cols; c += blockDim.x)  // loop: block-stride
            out[(size_t)r * cols + c] = in[c];
        in += gridDim.x * cols;
    }
    int b = blockIdx.x;
    while (b < rows) {  // loop: block-grid-stride
        out[b] = 0.0f;
        b += gridDim.x;
    }
    for (int r = blockIdx.x; r < rows; r += 2 * gridDim.x)  // loop: counted (every other block's turn)
        out[r] += 1.0f;
    for (int r = threadIdx.x; r < rows; r += gridDim.x)  // loop: counted (a thread index by the grid's blocks)
        out[r] += 2.0f;
}
