// RUN: kltrans opt -p 'unchunk-loop'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: the pair count, read by nothing once merged, goes; chunk-loop declares it again under its own name
// Chunks of two computed by a __device__ helper on each lane, the tail by the same helper:
// the helper stays (the merged loop calls it) while the pair count, read only by the
// chunks and the tail's index, goes.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
__device__ float affine(float v, float a, float b)
{
    return a * v + b;
}

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int first = blockDim.x * blockIdx.x + threadIdx.x;
    for (int p = first; p < n; p += gridDim.x * blockDim.x) {
        y[p] = affine(x[p], a, b);
    }
}
