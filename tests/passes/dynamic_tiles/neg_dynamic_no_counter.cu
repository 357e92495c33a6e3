// RUN: kltrans opt -p 'dynamic-tiles'
// CHECK-SKIP: counter-declared: no unsigned long long* / unsigned int* counter counter declared before the tile index (it must be zero at launch)
// kltrans: launch copy grid=ceil_div(n, 1024) block=256
extern "C" __global__ void copy(const float* x, float* y, int n)
{
    const unsigned int tile = blockIdx.x;
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) {
        const size_t i = (size_t)tile * 1024 + k;
        if (i < (size_t)n) y[i] = x[i];
    }
}
