// RUN: kltrans opt -p drop-shared-cache --assume 'no_alias(*)'
// GATE: tests/data/workloads/rowsoftmax
// ROUNDTRIP: model: shared-cache caches the values read, not the exponentials kept in place
// A block per row. The first sweep copies the row into dynamic shared memory (a byte
// buffer reached through a cast pointer) while finding the maximum; the second turns the
// cached values into exponentials in place; the last scales them. Each thread touches
// only the elements it stored, so the sweeps need no barrier between them.
// kltrans: launch softmax_cached grid=rows block=128
__device__ float block_max(float v, float* red)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = red[0];
    for (int w = 1; w < 4; w++)
        r = fmaxf(r, red[w]);
    __syncthreads();
    return r;
}

__device__ float block_sum(float v, float* red)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = v;
    __syncthreads();
    float r = red[0] + red[1] + red[2] + red[3];
    __syncthreads();
    return r;
}

__global__ void softmax_cached(const float* x, float* y, int rows, int cols)
{
    __shared__ float red[4];
    const float* xr = x + (size_t)blockIdx.x * cols;
    float* yr = y + (size_t)blockIdx.x * cols;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = xr[c];
        m = fmaxf(m, v);
    }
    m = block_max(m, red);

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float e = __expf(xr[c] - m);
        s += e;
    }
    s = block_sum(s, red);

    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        yr[c] = __expf(xr[c] - m) / s;
}
