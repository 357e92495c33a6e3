// RUN: kltrans opt -p share-row
// CHECK-SKIP: reduction-ops: --assume reassoc
// Splitting the float sum among 32 lanes adds it in another order: without the
// workload's tolerance (--assume reassoc) that is not allowed.
// kltrans: launch sums grid=ceil_div(rows, 128) block=128
__global__ void sums(const float* src, float* dst, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    float t = 0.0f;
    for (int k = 0; k < cols; k += 1)
        t += src[(size_t)r * cols + k];
    dst[r] = t;
}
