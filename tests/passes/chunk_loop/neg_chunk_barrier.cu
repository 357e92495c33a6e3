// RUN: kltrans opt -p 'chunk-loop{width=4,lanes=copies}'
// CHECK-SKIP: independent: cannot run the loop body
// A barrier in the body involves the other threads of the block: the model does not run
// it, so independence is not shown.
// kltrans: launch scale grid=min(ceil_div(n, 128), 264) block=128
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + b;
        __syncthreads();
    }
}
