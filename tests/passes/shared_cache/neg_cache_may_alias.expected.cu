// RUN: kltrans opt -p shared-cache
// CHECK-SKIP: no-alias: x may overlap y, which the kernel writes
// Without facts, y may be x (an in-place call): the second sweep would then read values
// the first... a cache would keep the old ones. The pass asks for no_alias.
// kltrans: launch twice_rows grid=rows block=128
__global__ void twice_rows(const float* x, float* y, int rows, int cols)
{
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, xr[c]);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = xr[c] - m;
}
