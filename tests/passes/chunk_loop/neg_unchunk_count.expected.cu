// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: chunk-form: m is not n / 4
// The loop covers (n + 3) / 4 chunks, rounding up: its last chunk already reads past n,
// so it is not the chunk-and-tail split of n elements.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    const int m = (n + 3) / 4;
    for (int i = tid; i < m; i += stride) {
        y[4 * i] = a * x[4 * i] + b;
        y[4 * i + 1] = a * x[4 * i + 1] + b;
        y[4 * i + 2] = a * x[4 * i + 2] + b;
        y[4 * i + 3] = a * x[4 * i + 3] + b;
    }
    int j = 4 * m + tid;
    if (j < n) {
        y[j] = a * x[j] + b;
    }
}
