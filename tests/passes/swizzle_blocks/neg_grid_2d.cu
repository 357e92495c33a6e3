// RUN: kltrans opt -p swizzle-blocks
// CHECK-SKIP: grid-2d: reads blockIdx.x 2 times
// blockIdx.x is read again later: renumbering the one read in the declarations would
// leave the other with the old numbering.
// kltrans: launch k grid=(ceil_div(n, 16), 4) block=(16, 16)
extern "C" __global__ void k(const float* x, float* y, int n)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < n && r < 64)
        y[r * n + c] = x[r * n + c] + (float)blockIdx.x;
}
