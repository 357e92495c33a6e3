// RUN: kltrans opt -p 'unpad-smem'
// CHECK-SKIP: padded-form: is not written C + P
// The padding is folded into one number (33): nothing says which part of the row is padding.
// kltrans: launch transpose33 grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 32)
extern "C" __global__ void transpose33(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][33];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r = blockIdx.y * 32 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    const int oc = blockIdx.y * 32 + threadIdx.x;
    const int orow = blockIdx.x * 32 + threadIdx.y;
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
