// RUN: kltrans opt -p 'merge-interior'
// CHECK-SKIP: specialized-copy: is not the else-branch
// The fast path scales by 2a: it is not the guarded loop without its check.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    if (base + 1024 <= n) {
        for (int k = 0; k < 4; ++k) {
            const int i = base + threadIdx.x + k * 256;
            y[i] = 2.0f * a * x[i] + b;
        }
    } else {
        for (int k = 0; k < 4; ++k) {
            const int i = base + threadIdx.x + k * 256;
            if (i < n) y[i] = a * x[i] + b;
        }
    }
}
