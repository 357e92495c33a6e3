// RUN: kltrans opt -p 'unchunk-loop'
// ROUNDTRIP: none: the chunk count n4, read by nothing once merged, goes; chunk-loop declares it again as n / 4 (not n >> 2)
// GATE: tests/data/workloads/scale
// A grid-stride loop over n / 4 chunks that loads four lanes into a float4, computes each
// and stores each, then a scalar tail for the last n % 4 elements: one loop over the
// elements with the tail's body does the same work. n4, no longer read, goes.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    for (int i = tid; i < n; i += stride) {
        y[i] = a * x[i] + b;
    }
}
