// RUN: kltrans opt -p 'specialize-interior'
// CHECK-SKIP: block-known: has no known value
// The block is the macro BS, defined nowhere in the file: the thread index ranges are
// unknown, so no condition can prove the guard.
// kltrans: launch scale grid=ceil_div(n, 1024) block=BS
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    for (int k = 0; k < 4; ++k) {
        const int i = base + threadIdx.x + k * 256;
        if (i < n) y[i] = a * x[i] + b;
    }
}
