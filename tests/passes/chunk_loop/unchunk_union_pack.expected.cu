// RUN: kltrans opt -p 'unchunk-loop'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: chunk-loop writes float4 lanes, not a union of a vector and an array
// Chunks of four move through a union of a float4 and a float[4] (one 16-byte access, the
// math on the array), loaded and stored by helpers: the model reads the union's members as
// the same four lanes, so each chunk stores what four scalar bodies store. The loop then
// walks elements; the chunk count, the helpers and the union, read by nothing else, go.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128

extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    for (int q = t; q < n; q += blockDim.x * gridDim.x) {
        y[q] = a * x[q] + b;
    }
}
