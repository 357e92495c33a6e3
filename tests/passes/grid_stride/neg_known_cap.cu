// RUN: kltrans opt -p 'grid-stride{max_blocks=GRID_CAP}'
// CHECK-SKIP: known-cap: GRID_CAP is not a positive integer constant of the file
// The cap is named, but the file defines no GRID_CAP: the launch header could not be
// evaluated.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + b;
}
