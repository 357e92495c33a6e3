// RUN: kltrans opt -p 'unchunk-loop'
// ROUNDTRIP: none: the chunk count n4, read by nothing once merged, goes; chunk-loop declares it again as n / 4 (not n >> 2)
// GATE: tests/data/workloads/scale
// A grid-stride loop over n / 4 chunks that loads four lanes into a float4, computes each
// and stores each, then a scalar tail for the last n % 4 elements: one loop over the
// elements with the tail's body does the same work. n4, no longer read, goes.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    const int n4 = n >> 2;
    for (int i = tid; i < n4; i += stride) {
        float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        v.x = a * v.x + b;
        v.y = a * v.y + b;
        v.z = a * v.z + b;
        v.w = a * v.w + b;
        y[4 * i] = v.x;
        y[4 * i + 1] = v.y;
        y[4 * i + 2] = v.z;
        y[4 * i + 3] = v.w;
    }
    int j = 4 * n4 + tid;
    if (j < n) {
        y[j] = a * x[j] + b;
    }
}
