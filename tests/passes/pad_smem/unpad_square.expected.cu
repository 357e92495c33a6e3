// RUN: kltrans opt -p 'unpad-smem'
// GATE: corpus/transpose
// The shape pad-smem writes (rows of TILE + TILE_PAD): unpadded again. The last subscripts
// threadIdx.x and threadIdx.y are below 32 (block 32 x 32), never in the padding.
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
