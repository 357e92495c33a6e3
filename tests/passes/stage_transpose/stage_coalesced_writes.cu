// RUN: kltrans opt -p 'stage-transpose{tile=32}' --assume 'no_alias(in,out)'
// GATE: corpus/transpose
// The corpus's naive kernel: x walks the output columns (= input rows), so the writes are
// coalesced and the reads stride by `cols`. Index spelled threadIdx.x + blockIdx.x *
// blockDim.x; a 16 x 16 block moves a 32 x 32 tile, 4 elements per thread.
// kltrans: launch transpose_naive grid=(ceil_div(rows, 16), ceil_div(cols, 16)) block=(16, 16)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int oc = threadIdx.x + blockIdx.x * blockDim.x;   // output column, 0..rows-1
    int orow = threadIdx.y + blockIdx.y * blockDim.y; // output row, 0..cols-1
    if (oc < rows && orow < cols) {
        out[(size_t)orow * rows + oc] = in[(size_t)oc * cols + orow];
    }
}
