// kltrans: launch transpose_naive grid=(ceil_div(rows, 16), ceil_div(cols, 16)) block=(16, 16)
// transpose naive: out = in^T for a rows x cols float32 matrix (row-major);
// out is cols x rows. One thread per output element, 2D grid:
// x indexes the output column (= input row), y the output row (= input column).
// launch: grid = (ceil(rows/16), ceil(cols/16)), block = (16, 16)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    int oc = blockIdx.x * blockDim.x + threadIdx.x;   // output column, 0..rows-1
    int orow = blockIdx.y * blockDim.y + threadIdx.y; // output row, 0..cols-1
    if (oc < rows && orow < cols) {
        out[(size_t)orow * rows + oc] = in[(size_t)oc * cols + orow];
    }
}
