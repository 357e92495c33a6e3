// RUN: kltrans opt -p 'chunk-loop{width=4,count=half,lanes=copies}'
// CHECK-SKIP: count: half is not a variable holding n / 4
// The named chunk count holds n / 2, not n / 4: a loop over it would run twice as many
// chunks of four as there are.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int half = n / 2;
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + b;
    }
}
