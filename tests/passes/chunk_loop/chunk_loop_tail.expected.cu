// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=copies,tail=loop}'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: unchunk-loop keeps the declaration of the count it no longer reads
// The leftover elements as a grid-stride loop after the chunks (tail=loop), the chunk as
// four copies of the body.
// kltrans: launch scale grid=min(ceil_div(n, 4 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int stride = blockDim.x * gridDim.x;
    const int n4 = n / 4;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        y[4 * i] = a * x[4 * i] + b;
        y[4 * i + 1] = a * x[4 * i + 1] + b;
        y[4 * i + 2] = a * x[4 * i + 2] + b;
        y[4 * i + 3] = a * x[4 * i + 3] + b;
    }
    for (int j = 4 * n4 + blockIdx.x * blockDim.x + threadIdx.x; j < n; j += stride) {
        y[j] = a * x[j] + b;
    }
}
