// RUN: kltrans opt -p 'vectorize-stream{unroll=2}'
// GATE: tests/data/workloads/scale
// The output of grid_stride/gs_scale_block_macro.cu: the folded loop
// for (int gid = ...; gid < n; gid += blockDim.x * gridDim.x) with an unbraced body and
// a BLOCK macro; the pass declares the flag and puts a float4 path, two vectors in
// flight per thread, in front of the loop.
// kltrans: launch scale grid=min(CEIL_DIV(n, BLOCK), 528) block=BLOCK
#define BLOCK 256
#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    for (int gid = blockIdx.x * blockDim.x + threadIdx.x; gid < n; gid += blockDim.x * gridDim.x)
        y[gid] = a * x[gid] + b;
}
