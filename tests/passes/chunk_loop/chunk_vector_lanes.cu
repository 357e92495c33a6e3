// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=vector}'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: unchunk-loop keeps the declaration of the count it no longer reads
// A grid-stride loop over elements, one store of a function of x[i]: chunks of four
// lanes in a float4 (a new count n4 = n / 4) and the scalar tail, one element per thread.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    for (int i = tid; i < n; i += stride) {
        y[i] = a * x[i] + b;
    }
}
