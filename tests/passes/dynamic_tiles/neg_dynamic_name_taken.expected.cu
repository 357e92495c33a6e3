// RUN: kltrans opt -p 'dynamic-tiles'
// CHECK-SKIP: shared-name-free: s_tile is already a name in copy
// kltrans: launch copy grid=ceil_div(n, 1024) block=256
extern "C" __global__ void copy(const float* x, float* y, int n, unsigned long long* counter)
{
    __shared__ float s_tile[1024];
    const unsigned int tile = blockIdx.x;
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) {
        const size_t i = (size_t)tile * 1024 + k;
        s_tile[k] = i < (size_t)n ? x[i] : 0.f;
        if (i < (size_t)n) y[i] = s_tile[k];
    }
}
