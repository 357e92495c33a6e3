// RUN: kltrans opt -p 'unchunk-loop'
// CHECK-SKIP: tail-fits: a block of 2 threads
// Blocks of two threads: with a single block, the tail of up to three elements has two
// threads, so the chunked kernel leaves an element out where the merged one would not.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 2), 264) block=2
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
    int j = 4 * n4 + tid;
    if (j < n) {
        y[j] = a * x[j] + b;
    }
}
