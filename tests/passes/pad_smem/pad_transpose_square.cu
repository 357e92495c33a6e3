// RUN: kltrans opt -p 'pad-smem{pad_name=TILE_PAD}'
// GATE: corpus/transpose
// One element per thread, a 32 x 32 block: the transposed read tile[threadIdx.x][threadIdx.y]
// is a 32-way bank conflict. The padding is written with the file's own constant TILE_PAD.
// kltrans: launch transpose_square grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 32)
#define TILE 32
#define TILE_PAD 1

extern "C" __global__ void transpose_square(const float* __restrict__ in,
                                            float* __restrict__ out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE];
    const int c = blockIdx.x * TILE + threadIdx.x;
    const int r = blockIdx.y * TILE + threadIdx.y;
    if (r < rows && c < cols)
        tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    const int oc = blockIdx.y * TILE + threadIdx.x;    // output column (an input row)
    const int orow = blockIdx.x * TILE + threadIdx.y;  // output row (an input column)
    if (orow < cols && oc < rows)
        out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
