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
    __shared__ float t[B + 2][B + 2];
    const int r = blockIdx.y * B + threadIdx.y, c = blockIdx.x * B + threadIdx.x;
    const bool in_grid = r < rows && c < cols;
    t[threadIdx.y + 1][threadIdx.x + 1] = in_grid ? x[(size_t)r * cols + c] : 0.0f;
    if (threadIdx.y == 0)
        t[0][threadIdx.x + 1] = (r > 0 && c < cols) ? x[(size_t)(r - 1) * cols + c] : 0.0f;
    if (threadIdx.y == B - 1)
        t[B + 1][threadIdx.x + 1] = (r + 1 < rows && c < cols) ? x[(size_t)(r + 1) * cols + c] : 0.0f;
    if (threadIdx.x == 0)
        t[threadIdx.y + 1][0] = (c > 0 && r < rows) ? x[(size_t)r * cols + c - 1] : 0.0f;
    if (threadIdx.x == B - 1)
        t[threadIdx.y + 1][B + 1] = (c + 1 < cols && r < rows) ? x[(size_t)r * cols + c + 1] : 0.0f;
    __syncthreads();
    if (in_grid) {
        float around = t[threadIdx.y][threadIdx.x + 1] + t[threadIdx.y + 2][threadIdx.x + 1] +
                       t[threadIdx.y + 1][threadIdx.x] + t[threadIdx.y + 1][threadIdx.x + 2];
        y[(size_t)r * cols + c] = c0 * t[threadIdx.y + 1][threadIdx.x + 1] + c1 * around;
    }
}
