// RUN: kltrans opt -p 'unchunk-loop'
// GATE: tests/data/workloads/scale
// ROUNDTRIP: none: chunk-loop writes the chunk as float4 lanes or as copies of the scalar body, not through float4 views
// The chunk loop is a while loop over float4 views of x and y (reinterpret_cast), the
// tail is named idx and sits after a comment. The model reads a view's load as four
// consecutive elements, so the chunk's stores are those of four scalar bodies: the loop
// keeps its while form and its update, the comment and the tail go.
// kltrans: launch scale grid=min(ceil_div(n, 256), 528) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int stride = blockDim.x * gridDim.x;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int g = tid;
    while (g < n)
    {
        y[g] = a * x[g] + b;
        g += stride;
    }
}
