// RUN: kltrans opt -p unswizzle-blocks
// CHECK-SKIP: bijection: the run does not map the blocks one to one onto the grid
// The last group is not clipped (rows = GROUP, no min with the rows left): for a grid
// height that is not a multiple of GROUP some blocks land outside the grid.
#define GROUP 4
// kltrans: launch k grid=(ceil_div(n, 16), ceil_div(m, 16)) block=(16, 16)
extern "C" __global__ void k(const float* x, float* y, int m, int n)
{
    const int id = blockIdx.y * gridDim.x + blockIdx.x;
    const int group = id / (GROUP * gridDim.x);
    const int local = id % (GROUP * gridDim.x);
    const int by = group * GROUP + local % GROUP;
    const int bx = local / GROUP;
    int r = by * 16 + threadIdx.y;
    int c = bx * 16 + threadIdx.x;
    if (c < n && r < m)
        y[r * n + c] = x[r * n + c];
}
