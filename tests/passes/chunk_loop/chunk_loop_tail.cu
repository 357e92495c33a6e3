// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=copies,tail=loop}'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: unchunk-loop keeps the declaration of the count it no longer reads
// The leftover elements as a grid-stride loop after the chunks (tail=loop), the chunk as
// four copies of the body.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + b;
    }
}
