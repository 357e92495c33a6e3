// RUN: kltrans opt -p 'scalarize-access' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The shape vectorize-access writes inside a coarsened loop (vec_scale_after_coarsen.cu):
// back to the element guard if (j < n) of the coarsened loop, the grid multiplied by 4.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 256), 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int c = 0; c < 4; ++c) {
        int j = gid + c * blockDim.x;
        if (j < n) y[j] = a * x[j] + b;
    }
}
