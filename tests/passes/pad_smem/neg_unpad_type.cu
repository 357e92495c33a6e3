// RUN: kltrans opt -p 'unpad-smem'
// CHECK-SKIP: element-type: narrower elements share a bank word
// A byte tile padded by 4 bytes (one bank word): padding counted in elements does not apply.
// kltrans: launch transpose_u8 grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 32)
extern "C" __global__ void transpose_u8(const unsigned char* in, unsigned char* out, int rows,
                                        int cols)
{
    __shared__ unsigned char tile[32][32 + 4];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r = blockIdx.y * 32 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    const int oc = blockIdx.y * 32 + threadIdx.x;
    const int orow = blockIdx.x * 32 + threadIdx.y;
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
