// RUN: kltrans opt -p 'specialize-interior{base=p}'
// CHECK-SKIP: rebase: 0 global accesses
// The guarded accesses are x[i] and y[i]: no `p[(cast)a * s + b]` to rebase.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    for (int k = 0; k < 4; ++k) {
        const int i = base + threadIdx.x + k * 256;
        if (i < n) y[i] = a * x[i] + b;
    }
}
