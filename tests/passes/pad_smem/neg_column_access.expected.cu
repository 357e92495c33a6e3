// RUN: kltrans opt -p 'pad-smem'
// CHECK-SKIP: column-access: no column-wise access of tile
// A 2-D smoothing stencil: every access has threadIdx.x in the LAST subscript, so a warp
// reads 32 consecutive words of one row (32 banks): padding removes no conflict.
// kltrans: launch smooth_rows grid=(ceil_div(n, 32), ceil_div(m, 8)) block=(32, 8)
#define BX 32
#define BY 8

extern "C" __global__ void smooth_rows(const float* in, float* out, int m, int n)
{
    __shared__ float tile[BY][BX + 2];
    const int c = blockIdx.x * BX + threadIdx.x;
    const int r = blockIdx.y * BY + threadIdx.y;
    const bool ok = r < m && c < n;
    tile[threadIdx.y][threadIdx.x + 1] = ok ? in[r * n + c] : 0.0f;
    if (threadIdx.x == 0) tile[threadIdx.y][0] = (ok && c > 0) ? in[r * n + c - 1] : 0.0f;
    if (threadIdx.x == BX - 1) tile[threadIdx.y][BX + 1] = (ok && c + 1 < n) ? in[r * n + c + 1] : 0.0f;
    __syncthreads();
    if (ok)
        out[r * n + c] = 0.25f * tile[threadIdx.y][threadIdx.x] + 0.5f * tile[threadIdx.y][threadIdx.x + 1] +
                         0.25f * tile[threadIdx.y][threadIdx.x + 2];
}
