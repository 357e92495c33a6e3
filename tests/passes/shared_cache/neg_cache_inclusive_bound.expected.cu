// RUN: kltrans opt -p shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: later-sweep: the loop's test is not `c < N` (the cache holds N elements)
// The sweeps run to `c <= last`: a cache of `last` elements would be one short.
// kltrans: launch center_upto grid=rows block=128
__global__ void center_upto(const float* x, float* y, int rows, int last)
{
    const float* xr = x + (size_t)blockIdx.x * (last + 1);
    float* yr = y + (size_t)blockIdx.x * (last + 1);
    float m = -INFINITY;
    for (int c = threadIdx.x; c <= last; c += blockDim.x)
        m = fmaxf(m, xr[c]);
    for (int c = threadIdx.x; c <= last; c += blockDim.x)
        yr[c] = xr[c] - m;
}
