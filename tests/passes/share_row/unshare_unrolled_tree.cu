// RUN: kltrans opt -p unshare-row --assume reassoc
// ROUNDTRIP: none: share-row folds with butterflies and slots, not an unrolled tree
// A block per row summing squares: the tree's rounds written out behind tests of the
// block's size, warp 0 finishing with a shuffle helper, thread 0 parking the row's scale
// in a shared scalar that every thread reads after a barrier. A group of one thread
// skips the rounds only a bigger group takes, passes the tests of its rank, and owns the
// scalar: the scalar becomes a local.
// kltrans: launch rms grid=rows block=128
__device__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffff, v, o);
    return v;
}

__global__ void rms(const float* x, float* y, int rows, int cols)
{
    __shared__ float part[128];
    __shared__ float scale;
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    unsigned int tid = threadIdx.x;
    float acc = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x)
        acc += xr[c] * xr[c];
    part[tid] = acc;
    __syncthreads();
    if (blockDim.x >= 256) {
        if (tid < 128)
            part[tid] = acc = acc + part[tid + 128];
        __syncthreads();
    }
    if (blockDim.x >= 128) {
        if (tid < 64)
            part[tid] = acc = acc + part[tid + 64];
        __syncthreads();
    }
    if (tid < 32) {
        if (blockDim.x >= 64)
            acc += part[tid + 32];
        acc = warp_sum(acc);
        if (tid == 0)
            scale = rsqrtf(acc / cols + 1e-6f);
    }
    __syncthreads();
    float s = scale;
    for (int c = tid; c < cols; c += blockDim.x)
        yr[c] = xr[c] * s;
}
