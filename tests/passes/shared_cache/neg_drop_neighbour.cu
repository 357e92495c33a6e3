// RUN: kltrans opt -p drop-shared-cache --assume 'no_alias(*)'
// CHECK-SKIP: private-cache: `cache[c + 1]` (line 17): the index is not the loop variable c
// The second sweep reads the element right of its own: a neighbour's, which another
// thread stored (and no barrier orders it). Not a thread's own cache.
// kltrans: launch smooth grid=rows block=128 smem=4*cols
__global__ void smooth(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float cache[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        cache[c] = xr[c];
    __syncthreads();
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = cache[c];
        if (c + 1 < cols)
            v += cache[c + 1];
        yr[c] = v;
    }
}
