// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: chunk-form: the tail loop does not step by the grid's thread count
// The tail loop steps by the block size, so with more than one block its elements are
// done by several threads at once; it is not the tail of a grid-stride loop.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    const int n4 = n / 4;
    for (int i = tid; i < n4; i += stride) {
        y[4 * i] = a * x[4 * i] + b;
        y[4 * i + 1] = a * x[4 * i + 1] + b;
        y[4 * i + 2] = a * x[4 * i + 2] + b;
        y[4 * i + 3] = a * x[4 * i + 3] + b;
    }
    for (int j = 4 * n4 + tid; j < n; j += blockDim.x) {
        y[j] = a * x[j] + b;
    }
}
