// RUN: kltrans opt -p 'unpad-smem'
// CHECK-SKIP: subscript-only: is used as a pointer
// A flat view of the padded tile (row stride 33 written out): removing the padding would
// change what flat[k * 33 + j] means.
// kltrans: launch transpose_view grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 32)
extern "C" __global__ void transpose_view(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32 + 1];
    float* flat = &tile[0][0];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r = blockIdx.y * 32 + threadIdx.y;
    flat[threadIdx.y * 33 + threadIdx.x] = (r < rows && c < cols) ? in[r * cols + c] : 0.0f;
    __syncthreads();
    const int oc = blockIdx.y * 32 + threadIdx.x;
    const int orow = blockIdx.x * 32 + threadIdx.y;
    if (orow < cols && oc < rows) out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y];
}
