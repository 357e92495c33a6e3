// RUN: kltrans opt -p 'unchunk-loop'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: the chunk stores through a float2 view; chunk-loop writes float2 lanes
// The leftover elements are done by a grid-stride loop that starts after the last chunk
// (any block size covers them); the chunk stores through a float2 view. One loop over the
// elements with the tail's body, written with the chunk loop's index, does the same work.
// kltrans: launch scale grid=min(ceil_div(n, 64), 132) block=64
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    for (int k = tid; k < n; k += stride) {
        y[k] = a * x[k] + b;
    }
}
