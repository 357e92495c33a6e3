// RUN: kltrans opt -p 'coarsen{factor=4}'
// GATE: tests/data/workloads/scale
// The scale kernel with a named gid, coarsened by 4; vectorize_access/
// vec_scale_after_coarsen.cu continues from this output.
// kltrans: launch scale grid=ceil_div(n, 256) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < n) y[gid] = a * x[gid] + b;
}
