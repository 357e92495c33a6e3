// RUN: kltrans opt -p 'dynamic-tiles'
// CHECK-SKIP: block-tile: the tile index is not declared at the top level of the kernel body (the barrier the pass adds must be reached by every thread)
// kltrans: launch copy grid=ceil_div(n, 1024) block=256
extern "C" __global__ void copy(const float* x, float* y, int n, unsigned long long* counter)
{
    if (n > 0) {
        const unsigned int tile = blockIdx.x;
        for (int k = threadIdx.x; k < 1024; k += blockDim.x) {
            const size_t i = (size_t)tile * 1024 + k;
            if (i < (size_t)n) y[i] = x[i];
        }
    }
}
