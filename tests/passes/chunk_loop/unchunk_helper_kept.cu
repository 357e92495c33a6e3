// RUN: kltrans opt -p 'unchunk-loop'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: the pair count, read by nothing once merged, goes; chunk-loop declares it again under its own name
// Chunks of two computed by a __device__ helper on each lane, the tail by the same helper:
// the helper stays (the merged loop calls it) while the pair count, read only by the
// chunks and the tail's index, goes.
// kltrans: launch scale grid=min(ceil_div(n, 2 * 128), 264) block=128
__device__ float affine(float v, float a, float b)
{
    return a * v + b;
}

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int first = blockDim.x * blockIdx.x + threadIdx.x;
    const int pairs = n >> 1;
    for (int p = first; p < pairs; p += gridDim.x * blockDim.x) {
        float2 v = make_float2(x[2 * p], x[2 * p + 1]);
        y[2 * p] = affine(v.x, a, b);
        y[2 * p + 1] = affine(v.y, a, b);
    }
    int last = 2 * pairs + first;
    if (last < n)
        y[last] = affine(x[last], a, b);
}
