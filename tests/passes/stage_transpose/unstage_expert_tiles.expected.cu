// RUN: kltrans opt -p 'unstage-transpose' --assume 'no_alias(*)'
// GATE: corpus/transpose
// The corpus expert once its hints, padding, unrolling and interior fast paths are gone:
// a 64 x 64 tile staged by a 32 x 8 block (16 elements per thread), the constants spelled
// by macros. unstage-transpose gives back one element per thread on the same block.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
#define TR_TILE 64
#define TR_BX 32
#define TR_BY 8

extern "C" __global__ void
transpose(const float* in, float* out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
    }
}
