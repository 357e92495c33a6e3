// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=vector}'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: unchunk-loop keeps the declaration of the count it no longer reads
// A grid-stride loop over elements, one store of a function of x[i]: chunks of four
// lanes in a float4 (a new count n4 = n / 4) and the scalar tail, one element per thread.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = blockDim.x * gridDim.x;
    const int n4 = n / 4;
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
