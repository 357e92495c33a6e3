// RUN: kltrans opt -p 'grid-stride{max_blocks=528}'
// GATE: tests/data/workloads/scale
// A scale kernel with a BLOCK macro and CEIL_DIV in the launch header: the declaration
// of gid folds into the loop header; vectorize_stream/vs_scale_after_grid_stride.cu
// continues from this output.
// kltrans: launch scale grid=min(CEIL_DIV(n, BLOCK), 528) block=BLOCK
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    for (int gid = blockIdx.x * blockDim.x + threadIdx.x; gid < n; gid += blockDim.x * gridDim.x)
        y[gid] = a * x[gid] + b;
}
