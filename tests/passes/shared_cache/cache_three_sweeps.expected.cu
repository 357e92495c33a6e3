// RUN: kltrans opt -p shared-cache --assume 'no_alias(*)'
// ROUNDTRIP: model: the first sweep keeps the braces the cache's store needed
// A block per row of a row normalization, x read in three sweeps (sum, squared
// deviations, output), each thread the same columns every time: the first sweep keeps
// what it reads in dynamic shared memory and the later two read it from there.
// kltrans: launch normalize grid=rows block=256 smem=4*cols
__device__ float block_sum(float v, float* red)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = 0.0f;
    for (int w = 0; w < 8; w++)
        r += red[w];
    __syncthreads();
    return r;
}

__global__ void normalize(const float* x, float* y, int rows, int cols)
{
    extern __shared__ float x_cache[];
    __shared__ float red[8];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        x_cache[c] = xr[c];
        s += xr[c];
    }
    const float mean = block_sum(s, red) / cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = x_cache[c] - mean;
        q += d * d;
    }
    const float inv = rsqrtf(block_sum(q, red) / cols + 1e-5f);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = (x_cache[c] - mean) * inv;
}
