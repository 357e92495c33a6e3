// RUN: kltrans opt -p vector-c-update
// CHECK-SKIP: private-lanes: the value reads row elsewhere than the element it updates
// Each element adds its left neighbour, which the previous iteration just updated:
// loading all four first would read the old value.
// kltrans: launch k grid=ceil_div(n, 512) block=128
extern "C" __global__ void k(float* row, int n)
{
    const int col = 4 * (blockIdx.x * blockDim.x + threadIdx.x) + 1;
    for (int j = 0; j < 4; ++j)
        if (col + j < n) row[col + j] = row[col + j] + row[col + j - 1];
}
