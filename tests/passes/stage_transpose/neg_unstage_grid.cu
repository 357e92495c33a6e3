// RUN: kltrans opt -p 'unstage-transpose'
// CHECK-SKIP: launch-shape: is not ceil_div(cols, 32)
// The grid launches twice as many tiles along y as there are: not one block per tile.
// kltrans: launch transpose_naive grid=(ceil_div(rows, 32), ceil_div(cols, 16)) block=(16, 16)
extern "C" __global__ void transpose_naive(const float* in, float* out, int rows, int cols)
{
    __shared__ float tile[32][32];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int r0 = blockIdx.x * 32;
    const int c0 = blockIdx.y * 32;

    for (int j = 0; j < 32; j += 16) {
        for (int h = 0; h < 32; h += 16) {
            const int oc = r0 + ty + j;
            const int orow = c0 + tx + h;
            if (oc < rows && orow < cols) {
                tile[ty + j][tx + h] = in[(size_t)oc * cols + orow];
            }
        }
    }
    __syncthreads();

    for (int j = 0; j < 32; j += 16) {
        for (int h = 0; h < 32; h += 16) {
            const int oy = c0 + ty + j;
            const int ocol = r0 + tx + h;
            if (oy < cols && ocol < rows) {
                out[(size_t)oy * rows + ocol] = tile[tx + h][ty + j];
            }
        }
    }
}
