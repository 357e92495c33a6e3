// RUN: kltrans opt -p 'chunk-loop{width=2,lanes=copies}'
// ROUNDTRIP: none: half, read only by the chunks, goes when unchunk-loop merges them again
// GATE: tests/data/workloads/scale
// A while grid-stride loop whose body declares a local: two braced copies per chunk, the
// update stays last, and an existing variable holding n / 2 (half) is the chunk count.
// kltrans: launch scale grid=min(ceil_div(n, 2 * 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int half = n / 2;
    unsigned int e = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int step = gridDim.x * blockDim.x;
    while (e < half) {
        {
            const float v = x[2 * e];
            y[2 * e] = a * v + b;
        }
        {
            const float v = x[2 * e + 1];
            y[2 * e + 1] = a * v + b;
        }
        e += step;
    }
    int j = 2 * half + blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        const float v = x[j];
        y[j] = a * v + b;
    }
}
