// RUN: kltrans opt -p 'pad-smem{pad=1}'
// GATE: corpus/transpose
// constexpr tile sizes, named thread indices and while loops: buf[tx][j] reads a column.
// kltrans: launch transpose_tiled grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
constexpr int kTile = 32;
constexpr int kRows = 8;

extern "C" __global__ void transpose_tiled(const float* in, float* out, int rows, int cols)
{
    __shared__ float buf[kTile][kTile];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row0 = blockIdx.y * kTile;
    const int col0 = blockIdx.x * kTile;
    int j = ty;
    while (j < kTile) {
        const int r = row0 + j, c = col0 + tx;
        if (r < rows && c < cols) buf[j][tx] = in[(size_t)r * cols + c];
        j += kRows;
    }
    __syncthreads();
    j = ty;
    while (j < kTile) {
        const int orow = col0 + j, ocol = row0 + tx;
        if (orow < cols && ocol < rows) out[(size_t)orow * rows + ocol] = buf[tx][j];
        j += kRows;
    }
}
