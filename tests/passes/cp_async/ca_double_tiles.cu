// RUN: kltrans opt -p 'cp-async' --arch sm_80
// Eight-byte elements: a tiled matrix-vector product in double precision; the vector
// chunk shared by the block is fetched with 8-byte cp.async copies (.ca), unguarded.
// kltrans: launch dgemv_tiled grid=ceil_div(rows, 128) block=128
#define CHUNK 128

extern "C" __global__ void dgemv_tiled(const double* __restrict__ A, const double* __restrict__ x,
                                       double* __restrict__ y, int rows, int cols)
{
    __shared__ double xs[CHUNK];
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    double acc = 0.0;
    for (int c0 = 0; c0 < cols; c0 += CHUNK) {
        xs[threadIdx.x] = x[min(c0 + threadIdx.x, cols - 1)];
        __syncthreads();
        for (int j = 0; j < CHUNK && c0 + j < cols; ++j)
            if (r < rows) acc += A[(size_t)r * cols + c0 + j] * xs[j];
        __syncthreads();
    }
    if (r < rows) y[r] = acc;
}
