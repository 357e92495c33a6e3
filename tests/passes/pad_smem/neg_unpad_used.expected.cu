// RUN: kltrans opt -p 'unpad-smem'
// CHECK-SKIP: pad-unused: the kernel uses the padding
// The padding column is storage: each row's sum is kept in tile[r][TILE]. Without the padding
// that slot is the next row's first element.
// kltrans: launch row_share grid=ceil_div(m, 32) block=(32, 32)
#define TILE 32
extern "C" __global__ void row_share(const float* in, float* out, int m)
{
    __shared__ float tile[TILE][TILE + 1];
    const int r = blockIdx.x * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = r < m ? in[r * TILE + threadIdx.x] : 0.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int k = 0; k < TILE; ++k) s += tile[threadIdx.y][k];
        tile[threadIdx.y][TILE] = s;
    }
    __syncthreads();
    if (r < m) out[r * TILE + threadIdx.x] = tile[threadIdx.y][threadIdx.x] / tile[threadIdx.y][TILE];
}
