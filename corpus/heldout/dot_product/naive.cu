// kltrans: launch dot_product_naive grid=ceil_div(n, 256) block=256
// dot_product naive: *out += x[0]*y[0] + ... + x[n-1]*y[n-1] (float32). out starts at
// zero; every thread adds its one product with a global atomicAdd.
extern "C" __global__ void dot_product_naive(const float* x, const float* y, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i] * y[i]);
    }
}
