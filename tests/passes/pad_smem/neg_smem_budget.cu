// RUN: kltrans opt -p 'pad-smem{pad=4}'
// CHECK-SKIP: smem-budget: over the 49152 bytes a block may declare
// The tile shares the block's static shared memory with a 32 KiB lookup table: 16 KiB +
// 32 KiB + 1 KiB of padding exceed the 48 KiB a kernel may declare statically.
// kltrans: launch remap_transpose grid=(ceil_div(cols, 64), ceil_div(rows, 64)) block=(64, 16)
extern "C" __global__ void remap_transpose(const float* in, const float* lut, float* out,
                                           int rows, int cols)
{
    __shared__ float tile[64][64];
    __shared__ float table[8192];
    const int t = threadIdx.y * 64 + threadIdx.x;
    for (int k = t; k < 8192; k += 1024) table[k] = lut[k];
    const int c = blockIdx.x * 64 + threadIdx.x;
    for (int j = threadIdx.y; j < 64; j += 16) {
        const int r = blockIdx.y * 64 + j;
        tile[j][threadIdx.x] = (r < rows && c < cols) ? in[r * cols + c] : 0.0f;
    }
    __syncthreads();
    const int oc = blockIdx.y * 64 + threadIdx.x;
    for (int j = threadIdx.y; j < 64; j += 16) {
        const int orow = blockIdx.x * 64 + j;
        const float v = tile[threadIdx.x][j];
        if (orow < cols && oc < rows) out[orow * rows + oc] = table[(int)(fabsf(v) * 8191.0f) & 8191];
    }
}
