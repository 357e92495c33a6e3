// kltrans: launch gelu_naive grid=ceil_div(n, 256) block=256
// gelu naive: y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2))) (exact erf form, float32).
// One thread per element, scalar loads and stores.
extern "C" __global__ void gelu_naive(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    }
}
