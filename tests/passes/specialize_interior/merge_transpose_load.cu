// RUN: kltrans opt -p 'merge-interior' --assume 'no_alias(*)'
// GATE: corpus/transpose
// The load nest is the only test of `full` left: it merges and the flag's declaration,
// right before it, goes too.
// kltrans: launch transpose grid=(ceil_div(cols, 64), ceil_div(rows, 64)) block=(32, 8)
#define TR_TILE 64
#define TR_BX 32
#define TR_BY 8

extern "C" __global__ void
transpose(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[TR_TILE][TR_TILE];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int r0 = blockIdx.y * TR_TILE;
    const int c0 = blockIdx.x * TR_TILE;
    const bool full = r0 + TR_TILE <= rows && c0 + TR_TILE <= cols;

    if (full) {
        const float* __restrict__ src = in + (size_t)r0 * cols + c0;
        for (int j = 0; j < TR_TILE; j += TR_BY) {
            for (int h = 0; h < TR_TILE; h += TR_BX) {
                tile[ty + j][tx + h] = src[(size_t)(ty + j) * cols + tx + h];
            }
        }
    } else {
        for (int j = 0; j < TR_TILE; j += TR_BY) {
            for (int h = 0; h < TR_TILE; h += TR_BX) {
                const int r = r0 + ty + j;
                const int c = c0 + tx + h;
                if (r < rows && c < cols) {
                    tile[ty + j][tx + h] = in[(size_t)r * cols + c];
                }
            }
        }
    }
    __syncthreads();

    // output row = input column c0 + ty + j, output column = input row r0 + tx + h
    for (int j = 0; j < TR_TILE; j += TR_BY) {
        for (int h = 0; h < TR_TILE; h += TR_BX) {
            const int orow = c0 + ty + j;
            const int ocol = r0 + tx + h;
            if (orow < cols && ocol < rows) {
                out[(size_t)orow * rows + ocol] = tile[tx + h][ty + j];
            }
        }
    }
}
