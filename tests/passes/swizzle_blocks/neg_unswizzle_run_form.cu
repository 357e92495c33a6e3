// RUN: kltrans opt -p unswizzle-blocks
// CHECK-SKIP: run-form: never leaves exactly a block row and a block column
// The linear block id is also used after the run (as a per-block output slot), so the
// run does not reduce to a block row and column.
// kltrans: launch k grid=(ceil_div(n, 16), 4) block=(16, 16)
extern "C" __global__ void k(const float* x, float* y, float* part, int n)
{
    const int gx = gridDim.x, gy = gridDim.y;
    const int id = blockIdx.y * gx + blockIdx.x;
    const int by = id % gy;
    const int bx = id / gy;
    int r = by * 16 + threadIdx.y;
    int c = bx * 16 + threadIdx.x;
    if (c < n && r < 64)
        y[r * n + c] = x[r * n + c];
    if (threadIdx.x == 0 && threadIdx.y == 0)
        part[id] = 1.0f;
}
