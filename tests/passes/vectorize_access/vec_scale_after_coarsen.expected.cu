// RUN: kltrans opt -p 'vectorize-access' --assume 'aligned(*,16)'
// GATE: tests/data/workloads/scale
// The output of coarsen/coarsen_scale_for_vectorize.cu: the element guard if (j < n) of
// the 4-way coarsened loop. j takes each value below 4 * grid * block once, consecutive
// threads on consecutive j, so each j may handle the 4 elements 4j .. 4j+3 (float4,
// scalar tail); the grid is divided by 4 once more.
// kltrans: launch scale grid=ceil_div(ceil_div(ceil_div(n, 256), 4), 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int c = 0; c < 4; ++c) {
        int j = gid + c * blockDim.x;
        if (4 * j + 3 < n) {
            const float4 x4 = reinterpret_cast<const float4*>(x)[j];
            float4 y4;
            y4.x = a * x4.x + b;
            y4.y = a * x4.y + b;
            y4.z = a * x4.z + b;
            y4.w = a * x4.w + b;
            reinterpret_cast<float4*>(y)[j] = y4;
        } else {
            for (int k = 4 * j; k < n; ++k) y[k] = a * x[k] + b;
        }
    }
}
