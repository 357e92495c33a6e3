// RUN: kltrans opt -p 'chunk-loop{width=16,lanes=copies}'
// CHECK-SKIP: body-fits: the chunk body would be about
// Sixteen copies of a long body would make a chunk of thousands of tokens (instruction
// cache and registers): refused.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        v = v * a + b * (v - 0.0f) / (1.0f + v * v);
        v = v * a + b * (v - 1.0f) / (1.0f + v * v);
        v = v * a + b * (v - 2.0f) / (1.0f + v * v);
        v = v * a + b * (v - 3.0f) / (1.0f + v * v);
        v = v * a + b * (v - 4.0f) / (1.0f + v * v);
        v = v * a + b * (v - 5.0f) / (1.0f + v * v);
        v = v * a + b * (v - 6.0f) / (1.0f + v * v);
        v = v * a + b * (v - 7.0f) / (1.0f + v * v);
        v = v * a + b * (v - 8.0f) / (1.0f + v * v);
        v = v * a + b * (v - 9.0f) / (1.0f + v * v);
        v = v * a + b * (v - 10.0f) / (1.0f + v * v);
        v = v * a + b * (v - 11.0f) / (1.0f + v * v);
        y[i] = v;
    }
}
