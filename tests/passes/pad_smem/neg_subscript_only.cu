// RUN: kltrans opt -p 'pad-smem'
// CHECK-SKIP: subscript-only: is used as a pointer the analysis cannot follow
// The tile is also read through a flat pointer (flat[k * 32 + j]): that index assumes rows of
// exactly 32 floats, and padding would shift every row after the first.
// kltrans: launch transpose_flat grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 32)
extern "C" __global__ void transpose_flat(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = (r < rows && c < cols) ? in[r * cols + c] : 0.0f;
    __syncthreads();
    const float* flat = &tile[0][0];
    const int oc = blockIdx.y * 32 + threadIdx.x;
    const int orow = blockIdx.x * 32 + threadIdx.y;
    if (orow < cols && oc < rows)
        out[orow * rows + oc] = tile[threadIdx.x][threadIdx.y] + 0.0f * flat[threadIdx.x * 32 + threadIdx.y];
}
