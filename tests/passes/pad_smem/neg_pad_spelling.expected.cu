// RUN: kltrans opt -p 'pad-smem{pad=1,pad_name=SMEM_PAD}'
// CHECK-SKIP: pad-spelling: pad_name=SMEM_PAD is 2, not pad=1
// The named constant does not say the padding asked for.
// kltrans: launch transpose_named grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 32)
#define SMEM_PAD 2
extern "C" __global__ void transpose_named(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r = blockIdx.y * 32 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    const int oc = blockIdx.y * 32 + threadIdx.x;
    const int orow = blockIdx.x * 32 + threadIdx.y;
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
