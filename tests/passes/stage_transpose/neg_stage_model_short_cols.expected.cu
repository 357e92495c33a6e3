// RUN: kltrans opt -p 'stage-transpose{tile=32}' --assume 'no_alias(*)'
// CHECK-SKIP: same-results: does not store the same
// The model reads a transpose, one element per thread, but its guard leaves the last
// column out (`c + 1 < cols`): the staged kernel, guarded by the matrix's extents, would
// copy it.
// kltrans: launch transpose_naive grid=(ceil_div(cols, 16), ceil_div(rows, 16)) block=(16, 16)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    const int c = threadIdx.x + 16 * blockIdx.x;
    const int r = threadIdx.y + 16 * blockIdx.y;
    if (r < rows && c + 1 < cols)
        out[c * rows + r] = in[r * cols + c];
}
