// RUN: kltrans opt -p 'coarsen{factor=4}'
// GATE: tests/data/workloads/scale
// The scale kernel with a named gid, coarsened by 4; vectorize_access/
// vec_scale_after_coarsen.cu continues from this output.
// kltrans: launch scale grid=ceil_div(ceil_div(n, 256), 4) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = blockIdx.x * blockDim.x * 4 + threadIdx.x;
    for (int c = 0; c < 4; ++c) {
        int j = gid + c * blockDim.x;
        if (j < n) y[j] = a * x[j] + b;
    }
}
