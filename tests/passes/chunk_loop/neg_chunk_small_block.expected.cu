// RUN: kltrans opt -p 'chunk-loop{width=8,lanes=copies}'
// CHECK-SKIP: tail-fits: a block of 4 threads
// A block of 4 threads with one block could leave up to 7 tail elements and only 4
// threads for them.
// kltrans: launch scale grid=min(ceil_div(n, 4), 264) block=4
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + b;
    }
}
