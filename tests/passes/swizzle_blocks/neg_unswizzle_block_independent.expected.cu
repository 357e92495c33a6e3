// RUN: kltrans opt -p unswizzle-blocks
// CHECK-SKIP: block-independent: the file uses `__threadfence`
// Blocks publish their partial sums with a fence: the numbering is observable.
// kltrans: launch k grid=(ceil_div(n, 16), 4) block=(16, 16)
extern "C" __global__ void k(const float* x, float* y, int n)
{
    const int gx = gridDim.x, gy = gridDim.y;
    const int id = blockIdx.y * gx + blockIdx.x;
    const int by = id % gy;
    const int bx = id / gy;
    int r = by * 16 + threadIdx.y;
    int c = bx * 16 + threadIdx.x;
    if (c < n && r < 64)
        y[r * n + c] = x[r * n + c];
    __threadfence();
}
