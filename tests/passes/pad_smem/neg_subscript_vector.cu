// RUN: kltrans opt -p 'pad-smem{pad=1}'
// CHECK-SKIP: subscript-only: padding would misalign it
// Rows are also written as float4 (16 bytes): with rows of 33 floats, &tile[r][4 * q] of an odd
// row is no longer 16-byte aligned. (pad=4 would keep the alignment.)
// kltrans: launch transpose_vec grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(8, 32)
extern "C" __global__ void transpose_vec(const float* in, float* out, int rows, int cols)
{
    __shared__ __align__(16) float tile[32][32];
    const int q = threadIdx.x;  // a float4 of the row
    const int r = blockIdx.y * 32 + threadIdx.y;
    const int c = blockIdx.x * 32 + 4 * q;
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows && c + 3 < cols && (cols & 3) == 0)
        v = *reinterpret_cast<const float4*>(&in[(size_t)r * cols + c]);
    *reinterpret_cast<float4*>(&tile[threadIdx.y][4 * q]) = v;
    __syncthreads();
    for (int k = 0; k < 4; ++k) {
        const int orow = blockIdx.x * 32 + 4 * q + k;
        const int oc = blockIdx.y * 32 + threadIdx.y;
        if (orow < cols && oc < rows) out[(size_t)orow * rows + oc] = tile[threadIdx.y][4 * q + k] + tile[q][threadIdx.y];
    }
}
