// RUN: kltrans opt -p drop-shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: stored-values: s is assigned between the store and `cache[c]`
// The scale the cached values were made with is doubled by a helper that takes it by
// reference (no assignment to it in the kernel's own text): recomputing the values in
// the second sweep would use the doubled scale. The model reads the reference parameter.
// kltrans: launch rescale grid=rows block=128 smem=4*cols
__device__ void double_it(float& s)
{
    s = s * 2.0f;
}

__global__ void rescale(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float cache[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.5f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        cache[c] = xr[c] * s;
    double_it(s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = cache[c] + s;
}
