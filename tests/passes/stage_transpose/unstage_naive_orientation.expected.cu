// RUN: kltrans opt -p 'unstage-transpose{form=tid-bid-dim}' --assume 'no_alias(*)'
// GATE: corpus/transpose
// The staged form of the corpus naive kernel (32 x 32 tile, 16 x 16 block, tile origins
// on blockIdx.x = input rows): back to one element per thread, index threadIdx + ...
// kltrans: launch transpose_naive grid=(ceil_div(rows, 16), ceil_div(cols, 16)) block=(16, 16)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int oc = threadIdx.x + blockIdx.x * blockDim.x;
    int orow = threadIdx.y + blockIdx.y * blockDim.y;
    if (oc < rows && orow < cols) {
        out[(size_t)orow * rows + oc] = in[(size_t)oc * cols + orow];
    }
}
