// RUN: kltrans opt -p 'one-per-thread'
// GATE: tests/data/workloads/scale
// A grid-stride loop written as a while loop that advances its index last, over a grid
// sized for two elements per thread: the loop becomes the guard, the update and the
// stride variable (used by nothing else) go, and the grid gives every element a thread.
// kltrans: launch scale grid=min(ceil_div(n, 2 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    unsigned int e = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int step = gridDim.x * blockDim.x;
    while (e < n) {
        const float v = x[e];
        y[e] = a * v + b;
        e += step;
    }
}
