// RUN: kltrans opt -p swizzle-blocks
// CHECK-SKIP: fresh-names: the temporary name rows is already used
// The transpose workload's parameter `rows` clashes with the default row-count name.
// kltrans: launch transpose_naive grid=(ceil_div(rows, 16), ceil_div(cols, 16)) block=(16, 16)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int oc = blockIdx.x * blockDim.x + threadIdx.x;
    int orow = blockIdx.y * blockDim.y + threadIdx.y;
    if (oc < rows && orow < cols)
        out[(size_t)orow * rows + oc] = in[(size_t)oc * cols + orow];
}
