// RUN: kltrans opt -p unshare-row --assume reassoc
// CHECK-SKIP: same-results: race on shared scale
// The block of unshare_unrolled_tree.cu without the barrier before every thread reads the
// shared scale thread 0 writes: the threads race (run one after another, thread 0 would
// happen to write first), so there is no row fold to serialize.
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
    float s = scale;
    for (int c = tid; c < cols; c += blockDim.x)
        yr[c] = xr[c] * s;
}
