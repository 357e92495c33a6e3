// RUN: kltrans opt -p 'merge-interior'
// CHECK-SKIP: flag-scope: does not directly precede
// Another declaration stands between the flag and its only test: the flag's declaration
// would go with the merge, and specialize-interior would put it back elsewhere.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    const bool full = base + 1024 <= n;
    const float scale_a = a;
    if (full) {
        for (int k = 0; k < 4; ++k) {
            const int i = base + threadIdx.x + k * 256;
            y[i] = scale_a * x[i] + b;
        }
    } else {
        for (int k = 0; k < 4; ++k) {
            const int i = base + threadIdx.x + k * 256;
            if (i < n) y[i] = scale_a * x[i] + b;
        }
    }
}
