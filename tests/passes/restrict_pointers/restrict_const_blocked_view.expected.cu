// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)'
// GATE: tests/data/workloads/scale
// x is only read, but through a view declared without const: const on x would make
// `float* src = x;` a compile error, so x is restricted without const (the view, the
// only one of x, is restricted too). From scan's H200 run at its lineage root, where a
// declared but unused `unsigned long long* counter = scratch;` failed the compile.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(float* __restrict__ x, float* __restrict__ y, float a, float b, int n)
{
    float* __restrict__ src = x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * src[i] + b;
    }
}
