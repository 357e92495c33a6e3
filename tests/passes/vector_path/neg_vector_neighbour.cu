// RUN: kltrans opt -p vector-path --assume 'no_alias(*)'
// CHECK-SKIP: element-loop: is used other than as a whole index
// Each element reads its right neighbour: not an element-wise body.
// kltrans: launch diff_rows grid=rows block=128
__global__ void diff_rows(const float* x, float* y, int rows, int cols)
{
    const float* in = x + (size_t)blockIdx.x * (cols + 1);
    float* out = y + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = in[c + 1] - in[c];
}
