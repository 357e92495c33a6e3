// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// x is only read, but it is assigned to `src`, declared without const in a declaration
// of two pointers: const on x would make `src = x;` a compile error, so x is restricted
// without const. The views are left alone (not one declarator each).
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(float* x, float* y, float a, float b, int n)
{
    float *src, *dst;
    src = x;
    dst = y;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        dst[i] = a * src[i] + b;
    }
}
