// RUN: kltrans opt -p 'one-per-thread'
// GATE: tests/data/workloads/scale
// A grid-stride loop written as a while loop that advances its index last, over a grid
// sized for two elements per thread: the loop becomes the guard, the update and the
// stride variable (used by nothing else) go, and the grid gives every element a thread.
// kltrans: launch scale grid=ceil_div(n, 128) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    unsigned int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n) {
        const float v = x[e];
        y[e] = a * v + b;
    }
}
