// RUN: kltrans opt -p 'specialize-interior'
// CHECK-SKIP: guarded-nest: has no guard
// The loop checks nothing: there is no edge path to split off.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    for (int k = 0; k < 4; ++k) {
        const int i = base + threadIdx.x + k * 256;
        y[i] = a * x[i] + b;
    }
}
