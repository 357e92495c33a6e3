// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: grid-stride-loop: `break;` (line 11) leaves the loop
// A loop the body leaves with break: as an if it would not compile.
// kltrans: launch scale grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float v = x[i];
        y[i] = a * v + b;
        if (v != v)
            break;
    }
}
