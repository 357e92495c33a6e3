// RUN: kltrans opt -p 'grid-stride{form=while,max_blocks=528}'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: one-per-thread keeps the braces the while loop needed
// The while form of the loop on a guard whose body is a single statement: the body is
// braced so that the update can follow it.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < n)
        y[t] = a * x[t] + b;
}
