// RUN: kltrans opt -p 'stage-transpose{tile=32}' --assume 'no_alias(*)'
// GATE: corpus/transpose
// ROUNDTRIP: model: the pass writes the staged or direct copy in its own spelling
// A naive transpose the exact form does not read: unsigned indices written inline with
// the thread id first, a constant block size, and an early return for the edges. The
// kernel model reads it as out[c * rows + r] = in[r * cols + c]; the staged kernel is
// written in the pass's own spelling and run against this one over whole grids.
#define SIDE 16
// kltrans: launch transpose_naive grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(SIDE, SIDE)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int r0 = blockIdx.y * 32;
    const int c0 = blockIdx.x * 32;

    for (int j = 0; j < 32; j += 16) {
        for (int h = 0; h < 32; h += 16) {
            const int row = r0 + ty + j;
            const int col = c0 + tx + h;
            if (row < rows && col < cols) {
                tile[ty + j][tx + h] = in[row * cols + col];
            }
        }
    }
    __syncthreads();

    for (int j = 0; j < 32; j += 16) {
        for (int h = 0; h < 32; h += 16) {
            const int orow = c0 + ty + j;
            const int ocol = r0 + tx + h;
            if (orow < cols && ocol < rows) {
                out[orow * rows + ocol] = tile[tx + h][ty + j];
            }
        }
    }
}
