// RUN: kltrans opt -p 'merge-interior'
// CHECK-SKIP: implies-guards: does not prove
// The blocks reach base + 1023 but the test only checks base + 512 <= n: on a block
// straddling n the fast path would write past the end.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    if (base + 512 <= n) {
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
