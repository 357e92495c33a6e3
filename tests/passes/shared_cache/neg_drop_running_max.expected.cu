// RUN: kltrans opt -p drop-shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: stored-values: m is assigned between the store and `cache[c]`
// The cached exponentials are taken against the running maximum as it was when each was
// stored: the second sweep cannot recompute them from the final maximum.
// kltrans: launch shifted grid=rows block=128 smem=4*cols
__global__ void shifted(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float cache[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        m = fmaxf(m, xr[c]);
        cache[c] = expf(xr[c] - m);
    }
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = cache[c];
}
