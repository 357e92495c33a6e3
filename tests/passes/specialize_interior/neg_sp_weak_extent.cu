// RUN: kltrans opt -p 'specialize-interior{extent=512}'
// CHECK-SKIP: implies-guards: does not prove
// A block reaches base + 1023: `base + 512 <= n` does not prove the guard.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    for (int k = 0; k < 4; ++k) {
        const int i = base + threadIdx.x + k * 256;
        if (i < n) y[i] = a * x[i] + b;
    }
}
