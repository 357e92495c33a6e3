// RUN: kltrans opt -p 'specialize-interior{flag=none}'
// GATE: tests/data/workloads/scale
// A coarsened 1-D kernel (4 elements per thread, 1024 per block): blocks whose 1024
// elements lie inside the array skip the per-element check; the condition is written
// in the if (flag=none), the loop counter written ++k and threadIdx.x used directly.
// kltrans: launch scale grid=ceil_div(n, 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int base = blockIdx.x * 1024;
    for (int k = 0; k < 4; ++k) {
        const int i = base + threadIdx.x + k * 256;
        if (i < n) y[i] = a * x[i] + b;
    }
}
