// RUN: kltrans opt -p 'one-per-thread'
// CHECK-SKIP: grid-stride-loop: the while body does not end with `i += stride;`
// The index advances before the body uses it: as a guard, the body would see another
// element.
// kltrans: launch scale grid=min(ceil_div(n, 256), 1024) block=256
extern "C" __global__ void scale(const float* x, float* y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x - blockDim.x * gridDim.x;
    while (i < n) {
        i += blockDim.x * gridDim.x;
        if (i < n)
            y[i] = a * x[i] + b;
    }
}
