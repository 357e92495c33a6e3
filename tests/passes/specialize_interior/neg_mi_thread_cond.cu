// RUN: kltrans opt -p 'merge-interior'
// CHECK-SKIP: uniform-condition: depends on the thread
// The flag mixes in threadIdx.x: the two paths are not taken by whole blocks, and the
// condition proves nothing about the block (the second nest repeats the same work).
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    const bool full = base + 1024 <= n && threadIdx.x < 256;
    if (full) {
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
    if (full) {
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
