// RUN: kltrans opt -p 'specialize-interior{flag=full,base=src,restrict=true}'
// CHECK-SKIP: no-alias: may alias
// Nothing says that in and out do not overlap: a __restrict__ copy of in could not be
// declared.
// kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int r0 = blockIdx.y * 32;
    const int c0 = blockIdx.x * 32;

    for (int j = 0; j < 32; j += 8) {
        const int y = r0 + ty + j;
        const int x = c0 + tx;
        if (y < rows && x < cols) tile[ty + j][tx] = in[(size_t)y * cols + x];
    }
    __syncthreads();

    for (int j = 0; j < 32; j += 8) {
        const int orow = c0 + ty + j;
        const int ocol = r0 + tx;
        if (orow < cols && ocol < rows) out[(size_t)orow * rows + ocol] = tile[tx][ty + j];
    }
}
