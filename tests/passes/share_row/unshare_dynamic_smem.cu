// RUN: kltrans opt -p unshare-row --assume reassoc
// ROUNDTRIP: none: share-row folds with butterflies and static slots, not a tree in dynamic shared memory
// A block per row whose tree runs in dynamic shared memory (the launch reserves one
// float per thread): a thread per row declares no shared memory, so the launch reserves
// none either.
// kltrans: launch row_max grid=rows block=64 smem=64*4
__global__ void row_max(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float red[];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        m = fmaxf(m, xr[c]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        y[blockIdx.x] = red[0];
}
