// RUN: kltrans opt -p 'swizzle-blocks{group=8,grid-x=nbx,grid-y=nby,id=bid,rows=group_rows}'
// GATE: corpus/transpose
// A templated transpose whose block coordinates are bare blockIdx reads (no
// multiplication); the workload's `rows` parameter forces another name for the row count.
template <int TILE_DIM>
__device__ void transpose_body(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    const int nbx = gridDim.x, nby = gridDim.y;
    const int bid = blockIdx.y * nbx + blockIdx.x;
    const int group = bid / (8 * nbx);
    const int first_row = group * 8;
    const int group_rows = min(8, nby - first_row);
    const int local = bid - group * 8 * nbx;
    int block_col = local / group_rows;
    int block_row = first_row + local % group_rows;
    int x = block_col * TILE_DIM + threadIdx.x;
    int y = block_row * TILE_DIM + threadIdx.y;
    if (x < rows && y < cols)
        tile[threadIdx.y][threadIdx.x] = in[(size_t)x * cols + y];
    __syncthreads();
    if (x < rows && y < cols)
        out[(size_t)y * rows + x] = tile[threadIdx.y][threadIdx.x];
}
// kltrans: launch transpose_t grid=(ceil_div(rows, 16), ceil_div(cols, 16)) block=(16, 16)
extern "C" __global__ void transpose_t(const float* in, float* out, int rows, int cols)
{
    transpose_body<16>(in, out, rows, cols);
}
