// RUN: kltrans opt -p unstage-shared
// GATE: tests/data/workloads/stencil5
// ROUNDTRIP: none: stage-shared stages a stretch a loop reads, not a tile with a halo
// A heat step on 16 x 16 tiles with a one-cell ring: the block's cells and, from the
// threads on each edge, the cells across it (zero outside the grid). Each read becomes
// the value its writer loaded: the neighbour thread's cell inside the tile, the edge
// thread's halo cell past it.
#define B 16
// kltrans: launch heat_step grid=(ceil_div(cols, B), ceil_div(rows, B)) block=(B, B)
__global__ void heat_step(const float* x, float* y, int rows, int cols, float c0, float c1)
{
    const int r = blockIdx.y * B + threadIdx.y, c = blockIdx.x * B + threadIdx.x;
    const bool in_grid = r < rows && c < cols;
    if (in_grid) {
        float around = (threadIdx.y >= 1 ? (((bool)(((int)(blockIdx.y * B + (threadIdx.y - 1))) < rows && c < cols)) ? x[(size_t)((int)(blockIdx.y * B + (threadIdx.y - 1))) * cols + c] : 0.0f) : ((((int)(blockIdx.y * B + 0)) > 0 && c < cols) ? x[(size_t)(((int)(blockIdx.y * B + 0)) - 1) * cols + c] : 0.0f)) + (threadIdx.y + 1 < blockDim.y ? (((bool)(((int)(blockIdx.y * B + (threadIdx.y + 1))) < rows && c < cols)) ? x[(size_t)((int)(blockIdx.y * B + (threadIdx.y + 1))) * cols + c] : 0.0f) : ((((int)(blockIdx.y * B + 15)) + 1 < rows && c < cols) ? x[(size_t)(((int)(blockIdx.y * B + 15)) + 1) * cols + c] : 0.0f)) +
                       (threadIdx.x >= 1 ? (((bool)(r < rows && ((int)(blockIdx.x * B + (threadIdx.x - 1))) < cols)) ? x[(size_t)r * cols + ((int)(blockIdx.x * B + (threadIdx.x - 1)))] : 0.0f) : ((((int)(blockIdx.x * B + 0)) > 0 && r < rows) ? x[(size_t)r * cols + ((int)(blockIdx.x * B + 0)) - 1] : 0.0f)) + (threadIdx.x + 1 < blockDim.x ? (((bool)(r < rows && ((int)(blockIdx.x * B + (threadIdx.x + 1))) < cols)) ? x[(size_t)r * cols + ((int)(blockIdx.x * B + (threadIdx.x + 1)))] : 0.0f) : ((((int)(blockIdx.x * B + 15)) + 1 < cols && r < rows) ? x[(size_t)r * cols + ((int)(blockIdx.x * B + 15)) + 1] : 0.0f));
        y[(size_t)r * cols + c] = c0 * (in_grid ? x[(size_t)r * cols + c] : 0.0f) + c1 * around;
    }
}
