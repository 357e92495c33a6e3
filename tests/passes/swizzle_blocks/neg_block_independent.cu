// RUN: kltrans opt -p swizzle-blocks
// CHECK-SKIP: block-independent: the file uses `atomic`
// Blocks take tickets with atomicAdd: the order they are numbered in is observable.
// kltrans: launch k grid=(ceil_div(n, 16), 4) block=(16, 16)
extern "C" __global__ void k(const float* x, float* y, int* ticket, int n)
{
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < n && r < 64)
        y[r * n + c] = x[r * n + c] + (float)atomicAdd(ticket, 1);
}
