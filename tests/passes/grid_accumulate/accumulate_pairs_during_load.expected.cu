// RUN: kltrans opt -p grid-accumulate --assume reassoc
// ROUNDTRIP: none: load-one-value reads a loop of one load per trip, not a group of loads added during the load
// The first add during the load (two elements per thread, a block apart) before a
// shared-memory tree; capped, each thread walks the input a whole grid of pairs at a time.
// kltrans: launch pair_sums grid=min(ceil_div(n, 2 * 128), 1024) block=128
__global__ void pair_sums(const float* in, float* out, int n)
{
    __shared__ float part[128];
    int i = blockIdx.x * (2 * blockDim.x) + threadIdx.x;
    float acc = 0.0f;
    for (int k = i; k < n; k += 2 * blockDim.x * gridDim.x) {
        acc += in[k];
        if (k + blockDim.x < n) acc += in[k + blockDim.x];
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        atomicAdd(out, part[0]);
}
