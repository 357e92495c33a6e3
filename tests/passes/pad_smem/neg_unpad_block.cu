// RUN: kltrans opt -p 'unpad-smem'
// CHECK-SKIP: block-known: is not a constant
// The block is the template parameter BS and no instantiation gives it a value: threadIdx.x
// cannot be bounded, so nothing shows that tile[..][threadIdx.x] stays out of the padding.
// kltrans: launch transpose_bs grid=(ceil_div(cols, BS), ceil_div(rows, BS)) block=(BS, BS)
template <int BS>
__global__ void transpose_bs(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    const int c = blockIdx.x * BS + threadIdx.x;
    const int r = blockIdx.y * BS + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    const int oc = blockIdx.y * BS + threadIdx.x;
    const int orow = blockIdx.x * BS + threadIdx.y;
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
