// RUN: kltrans opt -p 'stage-transpose{tile=32}' --assume 'no_alias(*)'
// GATE: corpus/transpose
// The textbook naive transpose: x walks the input columns, so the reads are coalesced
// and the writes stride by `rows`. A 32 x 32 tile staged by a 32 x 8 block (4 elements
// per thread) makes the writes coalesced too.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < rows && x < cols) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
