// RUN: kltrans opt -p 'specialize-interior{flag=full}'
// CHECK-SKIP: uniform-condition: depends on the thread
// The flag `full` already exists and depends on threadIdx.x: reusing it would send the
// threads of one block down different paths.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    const bool full = threadIdx.x + base + 1024 <= n;
    for (int k = 0; k < 4; ++k) {
        const int i = base + threadIdx.x + k * 256;
        if (i < n) y[i] = a * x[i] + b;
    }
}
