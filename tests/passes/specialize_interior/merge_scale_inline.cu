// RUN: kltrans opt -p 'merge-interior'
// GATE: tests/data/workloads/scale
// The shape specialize-interior{flag=none} writes: the condition in the if, the fast path
// the guarded loop without its check. Only the guarded loop stays.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    if (base + 1024 <= n) {
        for (int k = 0; k < 4; ++k) {
            const int i = base + threadIdx.x + k * 256;
            y[i] = a * x[i] + b;
        }
    } else {
        for (int k = 0; k < 4; ++k) {
            const int i = base + threadIdx.x + k * 256;
            if (i < n) y[i] = a * x[i] + b;
        }
    }
}
