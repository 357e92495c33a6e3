// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=copies}'
// CHECK-SKIP: element-loop: the loop already runs over n4 chunks of 4
// The loop is already the chunk loop of a chunk-and-tail split: chunking it again would
// nest chunks in chunks, the code growing by W each time.
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
    int j = 4 * n4 + tid;
    if (j < n) {
        y[j] = a * x[j] + b;
    }
}
