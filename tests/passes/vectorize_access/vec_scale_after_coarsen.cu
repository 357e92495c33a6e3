// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The output of coarsen/coarsen_scale_for_vectorize.cu: the element guard if (j < n) of
// the 4-way coarsened loop. j takes each value below 4 * grid * block once, consecutive
// threads on consecutive j, so each j may handle the 4 elements 4j .. 4j+3 (float4,
// scalar tail); the grid is divided by 4 once more.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 256), 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int c = 0; c < 4; ++c) {
        int j = gid + c * blockDim.x;
        if (j < n) y[j] = a * x[j] + b;
    }
}
