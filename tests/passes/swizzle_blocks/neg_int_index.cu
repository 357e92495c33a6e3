// RUN: kltrans opt -p swizzle-blocks
// CHECK-SKIP: int-index: has type float, not an integer type
// The block coordinates are converted to float: the integer renumbering does not apply.
// kltrans: launch k grid=(ceil_div(n, 16), 4) block=(16, 16)
extern "C" __global__ void k(float* y, int n)
{
    float fy = blockIdx.y * 0.5f;
    float fx = blockIdx.x * 0.25f;
    int c = (int)(fx * 4.0f) * 16 + threadIdx.x;
    if (c < n)
        y[c] = fx + fy;
}
