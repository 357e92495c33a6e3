// RUN: kltrans opt -p 'stage-transpose{tile=16}' --assume 'no_alias(*)'
// A double-precision transpose with a 16 x 16 block and a 16 x 16 tile: one element per
// thread, no loops; the tile is 2 KiB. The index is written tid + dim * bid.
// kltrans: launch transpose_f64 grid=(ceil_div(n, 16), ceil_div(m, 16)) block=(16, 16)
__global__ void transpose_f64(const double* a, double* at, int m, int n)
{
    __shared__ double tile[16][16];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int r0 = blockIdx.y * 16;
    const int c0 = blockIdx.x * 16;

    const int gy = r0 + ty;
    const int gx = c0 + tx;
    if (gy < m && gx < n) {
        tile[ty][tx] = a[gy * n + gx];
    }
    __syncthreads();

    const int orow = c0 + ty;
    const int ocol = r0 + tx;
    if (orow < n && ocol < m) {
        at[orow * m + ocol] = tile[tx][ty];
    }
}
