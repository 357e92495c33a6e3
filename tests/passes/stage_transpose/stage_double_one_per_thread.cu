// RUN: kltrans opt -p 'stage-transpose{tile=16}' --assume 'no_alias(*)'
// A double-precision transpose with a 16 x 16 block and a 16 x 16 tile: one element per
// thread, no loops; the tile is 2 KiB. The index is written tid + dim * bid.
// kltrans: launch transpose_f64 grid=(ceil_div(n, 16), ceil_div(m, 16)) block=(16, 16)
__global__ void transpose_f64(const double* a, double* at, int m, int n)
{
    int gx = threadIdx.x + blockDim.x * blockIdx.x;
    int gy = threadIdx.y + blockDim.y * blockIdx.y;
    if (gy < m && gx < n) {
        at[gx * m + gy] = a[gy * n + gx];
    }
}
