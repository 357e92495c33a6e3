// RUN: kltrans opt -p 'restrict-pointers' --assume 'no_alias(*)' --site 2
// GATE: tests/data/workloads/scale
// x is only read, by a helper whose parameter is a non-const pointer: with the kernel
// rewritten alone (site 2; the optimizer rewrites one site at a time), const on x would make
// the call a compile error, so x is restricted without const.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
__device__ float scaled(float* p, int i, float a)
{
    return a * p[i];
}

extern "C" __global__ void scale(float* __restrict__ x, float* __restrict__ y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = scaled(x, i, a) + b;
    }
}
